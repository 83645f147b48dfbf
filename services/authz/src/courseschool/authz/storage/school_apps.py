"""What a school's owners and admins see and do about the apps its people connected
(`endpoints/school_apps.py`): the live grants of everyone at the school, by app, and
the apps the school blocked (`authz_school_blocks`)."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec


class SchoolGrant(msgspec.Struct, frozen=True, kw_only=True):
    grant_id: str
    client_id: str
    client_name: str | None
    is_integration: bool
    verified_origin: str | None
    redirect_uris: list[str]
    user_id: str
    user_name: str
    user_email: str
    user_role: str
    scope: str
    approved_at: int
    last_used_at: int | None


# Live grants of the school whose code was exchanged, most recently used first.
_LIVE_AT_SCHOOL = """
SELECT g.id::text AS grant_id, g.client_id, c.client_name, c.is_integration, c.verified_origin, c.redirect_uris,
       u.id::text AS user_id, u.name AS user_name, u.email AS user_email, u.role AS user_role, g.scope,
       extract(epoch FROM g.created_at)::bigint AS approved_at,
       extract(epoch FROM g.last_used_at)::bigint AS last_used_at
FROM authz_grants g
JOIN authz_clients c ON c.client_id = g.client_id
JOIN authz_users u ON u.id = g.user_id
WHERE g.school_id = $1 AND g.revoked_at IS NULL AND g.last_used_at IS NOT NULL
ORDER BY g.last_used_at DESC, g.id
"""
_LIVE_IDS = """
SELECT id::text FROM authz_grants
WHERE school_id = $1 AND client_id = $2 AND revoked_at IS NULL AND ($3::uuid IS NULL OR user_id = $3)
ORDER BY id
"""
_BLOCK = """
INSERT INTO authz_school_blocks (school_id, client_id, blocked_at, blocked_by) VALUES ($1, $2, to_timestamp($3), $4)
ON CONFLICT (school_id, client_id) DO NOTHING
"""
_UNBLOCK = "DELETE FROM authz_school_blocks WHERE school_id = $1 AND client_id = $2"
_BLOCKED = "SELECT EXISTS (SELECT 1 FROM authz_school_blocks WHERE school_id = $1 AND client_id = $2)"
_BLOCKED_AT_SCHOOL = """
SELECT b.client_id, c.client_name, extract(epoch FROM b.blocked_at)::bigint AS blocked_at
FROM authz_school_blocks b LEFT JOIN authz_clients c ON c.client_id = b.client_id
WHERE b.school_id = $1 ORDER BY b.blocked_at DESC
"""


class BlockedApp(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    client_name: str | None
    blocked_at: int


class PgSchoolAppStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def live_grants(self, school_id: str) -> list[SchoolGrant]:
        rows = await self._pool.fetch(_LIVE_AT_SCHOOL, uuid.UUID(school_id))
        return [SchoolGrant(**dict(r)) for r in rows]

    async def live_grant_ids(self, school_id: str, client_id: str, user_id: str | None = None) -> list[str]:
        """The live grants of one app at the school (of one person there, when named)."""
        person = uuid.UUID(user_id) if user_id else None
        return [r["id"] for r in await self._pool.fetch(_LIVE_IDS, uuid.UUID(school_id), client_id, person)]

    async def block(self, school_id: str, client_id: str, *, by: str, now: int) -> bool:
        """Block the app for the school; False when it already was."""
        status = await self._pool.execute(_BLOCK, uuid.UUID(school_id), client_id, now, uuid.UUID(by))
        return status.endswith(" 1")

    async def unblock(self, school_id: str, client_id: str) -> bool:
        return (await self._pool.execute(_UNBLOCK, uuid.UUID(school_id), client_id)).endswith(" 1")

    async def blocked(self, school_id: str, client_id: str) -> bool:
        return bool(await self._pool.fetchval(_BLOCKED, uuid.UUID(school_id), client_id))

    async def blocked_apps(self, school_id: str) -> list[BlockedApp]:
        return [BlockedApp(**dict(r)) for r in await self._pool.fetch(_BLOCKED_AT_SCHOOL, uuid.UUID(school_id))]
