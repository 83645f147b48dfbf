"""Remembered consent (administrator-made integrations only)."""

from __future__ import annotations

import uuid

import asyncpg

from courseschool.common.clock import Clock

_GET = "SELECT scope FROM authz_consents WHERE user_id = $1 AND client_id = $2"
_PUT = """
INSERT INTO authz_consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, to_timestamp($4))
ON CONFLICT (user_id, client_id) DO UPDATE SET scope = EXCLUDED.scope, granted_at = EXCLUDED.granted_at
"""


class PgConsentStore:
    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock

    async def scope(self, user_id: str, client_id: str) -> str | None:
        return await self._pool.fetchval(_GET, uuid.UUID(user_id), client_id)

    async def remember(self, user_id: str, client_id: str, scope: str) -> None:
        await self._pool.execute(_PUT, uuid.UUID(user_id), client_id, scope, self._clock.now())
