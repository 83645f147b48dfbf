"""Login sessions: the browser keeps a random id in a cookie, Postgres its digest."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from courseschool.common.clock import Clock
from courseschool.common.secrets import digest, new_token

_INSERT = """
INSERT INTO authz_login_sessions (id_hash, user_id, auth_time, expires_at)
VALUES ($1, $2, to_timestamp($3), to_timestamp($4))
"""
_GET = """
SELECT s.user_id::text, extract(epoch FROM s.auth_time)::bigint AS auth_time
FROM authz_login_sessions s JOIN authz_users u ON u.id = s.user_id
WHERE s.id_hash = $1 AND s.ended_at IS NULL AND s.expires_at > to_timestamp($2)
  AND u.disabled_at IS NULL
"""
_END = "UPDATE authz_login_sessions SET ended_at = to_timestamp($2) WHERE id_hash = $1 AND ended_at IS NULL"


class LoginSession(msgspec.Struct, frozen=True):
    user_id: str
    auth_time: int


class PgSessionStore:
    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock  # when a session ended (housekeeping removes it a day later)

    async def create(self, *, user_id: str, auth_time: int, ttl: int) -> str:
        session_id = new_token()
        await self._pool.execute(_INSERT, digest(session_id), uuid.UUID(user_id), auth_time, auth_time + ttl)
        return session_id

    async def get(self, session_id: str | None, *, now: int) -> LoginSession | None:
        if not session_id or len(session_id) > 128:
            return None
        row = await self._pool.fetchrow(_GET, digest(session_id), now)
        return LoginSession(**dict(row)) if row else None

    async def end(self, session_id: str) -> None:
        await self._pool.execute(_END, digest(session_id), self._clock.now())
