"""The schools this resource server has met (`api_schools`): their id, slug and name,
as the authorization server, which owns them, told it (`schools.SchoolDirectory`)."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

_BY_REF = "SELECT id::text, slug, name FROM api_schools WHERE slug = $1 OR id::text = $1"
_UPSERT = """
INSERT INTO api_schools (id, slug, name) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET slug = EXCLUDED.slug, name = coalesce(EXCLUDED.name, api_schools.name)
"""


class SchoolRecord(msgspec.Struct, frozen=True):
    id: str
    slug: str
    name: str | None = None


class PgSchoolStore:
    def __init__(self, pool: asyncpg.Pool | asyncpg.Connection) -> None:
        self._pool = pool

    async def find(self, ref: str) -> SchoolRecord | None:
        row = await self._pool.fetchrow(_BY_REF, ref)
        return SchoolRecord(**dict(row)) if row else None

    async def save(self, school: SchoolRecord) -> None:
        await self._pool.execute(_UPSERT, uuid.UUID(school.id), school.slug, school.name)
