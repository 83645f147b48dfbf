"""Uploaded files (`api_files`), each written with its record in the activity of its
grant; what may be uploaded is `uploads.py`'s to say. `created_at` is recorded by
PostgreSQL's clock, as an item's is (items.py); nothing here decides by the time."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import asyncpg

from .activity import Actor, actor_parameters, record_change

# The upload's record in the activity of its grant, by the same statement (activity.py).
_INSERT = f"""
WITH written AS (
    INSERT INTO api_files (id, school_id, filename, content_type, size, sha256, content)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    RETURNING id, school_id, filename, content_type, size, created_at
),
changed AS (SELECT created_at AS at, id, school_id, filename AS name FROM written),
{record_change(8)}
SELECT id::text, filename, content_type, size, created_at FROM written
"""
_GET = "SELECT filename, content_type, content, sha256 FROM api_files WHERE id = $1"


class PgFileStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def save(
        self, school_id: str, filename: str, content_type: str, content: bytes, actor: Actor | None = None
    ) -> dict[str, Any]:
        row = await self._pool.fetchrow(
            _INSERT,
            uuid.uuid4(),
            uuid.UUID(school_id),
            filename,
            content_type,
            len(content),
            hashlib.sha256(content).digest(),
            content,
            *actor_parameters(actor, "storage", "create"),
        )
        return {**dict(row), "created_at": row["created_at"].isoformat()}

    async def get(self, file_id: str) -> asyncpg.Record | None:
        try:
            key = uuid.UUID(file_id)
        except ValueError:
            return None
        return await self._pool.fetchrow(_GET, key)
