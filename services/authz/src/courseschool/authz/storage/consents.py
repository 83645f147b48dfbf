"""Remembered consent (administrator-made integrations only)."""

from __future__ import annotations

import uuid

import asyncpg

_GET = "SELECT scope FROM authz_consents WHERE user_id = $1 AND client_id = $2"
_PUT = """
INSERT INTO authz_consents (user_id, client_id, scope) VALUES ($1, $2, $3)
ON CONFLICT (user_id, client_id) DO UPDATE SET scope = EXCLUDED.scope, granted_at = now()
"""


class PgConsentStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def scope(self, user_id: str, client_id: str) -> str | None:
        return await self._pool.fetchval(_GET, uuid.UUID(user_id), client_id)

    async def remember(self, user_id: str, client_id: str, scope: str) -> None:
        await self._pool.execute(_PUT, uuid.UUID(user_id), client_id, scope)
