"""Login sessions: the browser keeps a random id in a cookie, Postgres its digest, the
address and browser (in a few words) it was opened from, when it was last seen, and
when its person last confirmed it is them (the account page's recent sign-in)."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from courseschool.common.clock import Clock
from courseschool.common.secrets import digest, new_token

SEEN_EVERY = 60  # seconds: a session's last_seen_at is written at most this often

_INSERT = """
INSERT INTO authz_login_sessions (id_hash, user_id, auth_time, expires_at)
VALUES ($1, $2, to_timestamp($3), to_timestamp($4))
"""
_GET = """
SELECT s.user_id::text, extract(epoch FROM s.auth_time)::bigint AS auth_time,
       extract(epoch FROM greatest(s.auth_time, s.confirmed_at))::bigint AS confirmed_at,
       s.last_seen_at IS NULL OR s.last_seen_at < to_timestamp($2) - make_interval(secs => $3) AS stale
FROM authz_login_sessions s JOIN authz_users u ON u.id = s.user_id
WHERE s.id_hash = $1 AND s.ended_at IS NULL AND s.expires_at > to_timestamp($2)
  AND u.disabled_at IS NULL
"""
_LIVES = """
SELECT 1 FROM authz_login_sessions s JOIN authz_users u ON u.id = s.user_id
WHERE s.id_hash = $1 AND s.user_id = $2::uuid AND s.ended_at IS NULL AND s.expires_at > to_timestamp($3)
  AND u.disabled_at IS NULL
"""
_SEEN = "UPDATE authz_login_sessions SET last_seen_at = to_timestamp($2) WHERE id_hash = $1"
_DESCRIBE = """
UPDATE authz_login_sessions SET created_from = $2, created_agent = $3, last_seen_at = auth_time WHERE id_hash = $1
"""
_CONFIRM = "UPDATE authz_login_sessions SET confirmed_at = to_timestamp($2) WHERE id_hash = $1 AND ended_at IS NULL"
_END = "UPDATE authz_login_sessions SET ended_at = to_timestamp($2) WHERE id_hash = $1 AND ended_at IS NULL"
_BROWSERS = """
SELECT id_hash = $3 AS current, extract(epoch FROM auth_time)::bigint AS signed_in_at,
       extract(epoch FROM coalesce(last_seen_at, auth_time))::bigint AS last_seen_at,
       created_from, created_agent
FROM authz_login_sessions
WHERE user_id = $1::uuid AND ended_at IS NULL AND expires_at > to_timestamp($2)
ORDER BY id_hash = $3 DESC, coalesce(last_seen_at, auth_time) DESC
LIMIT 100
"""
_END_OTHERS = """
UPDATE authz_login_sessions SET ended_at = to_timestamp($2)
WHERE user_id = $1::uuid AND ended_at IS NULL AND id_hash <> $3
"""


class LoginSession(msgspec.Struct, frozen=True):
    user_id: str
    auth_time: int
    confirmed_at: int = 0  # the later of the sign-in and the last confirmation (password or code)


class Browser(msgspec.Struct, frozen=True, kw_only=True):
    """A browser signed in now, as the account page lists it."""

    current: bool  # the one looking at the page
    signed_in_at: int
    last_seen_at: int
    created_from: str | None  # the address it signed in from
    created_agent: str | None  # "Firefox on Linux"; None: unknown


class PgSessionStore:
    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock  # when a session ended (housekeeping removes it a day later)

    async def create(self, *, user_id: str, auth_time: int, ttl: int) -> str:
        session_id = new_token()
        await self._pool.execute(_INSERT, digest(session_id), uuid.UUID(user_id), auth_time, auth_time + ttl)
        return session_id

    async def describe(self, session_id: str, *, ip: str | None, agent: str | None) -> None:
        """Where a session was just opened from (the web layer, which sees the request)."""
        await self._pool.execute(_DESCRIBE, digest(session_id), ip, agent)

    async def get(self, session_id: str | None, *, now: int) -> LoginSession | None:
        """The live session `session_id` is; seen now (written at most every SEEN_EVERY seconds)."""
        if not session_id or len(session_id) > 128:
            return None
        row = await self._pool.fetchrow(_GET, digest(session_id), now, SEEN_EVERY)
        if row is None:
            return None
        if row["stale"]:
            await self._pool.execute(_SEEN, digest(session_id), now)
        return LoginSession(row["user_id"], row["auth_time"], row["confirmed_at"])

    async def lives(self, id_hash: bytes | None, user_id: str, *, now: int) -> bool:
        """Whether the session of this digest is live and `user_id`'s (not marked seen)."""
        if id_hash is None:
            return False
        return await self._pool.fetchval(_LIVES, id_hash, user_id, now) is not None

    async def confirm(self, session_id: str, *, now: int) -> None:
        """Its person just proved it is them again (the password or a code)."""
        await self._pool.execute(_CONFIRM, digest(session_id), now)

    async def browsers(self, user_id: str, session_id: str, *, now: int) -> list[Browser]:
        """The person's live sessions, the one of `session_id` first, then the last seen first."""
        rows = await self._pool.fetch(_BROWSERS, user_id, now, digest(session_id))
        return [Browser(**dict(r)) for r in rows]

    async def end_others(self, user_id: str, session_id: str) -> int:
        """End every session of the person but `session_id`'s; how many ended."""
        status = await self._pool.execute(_END_OTHERS, user_id, self._clock.now(), digest(session_id))
        return int(status.rsplit(" ", 1)[-1])

    async def end(self, session_id: str) -> None:
        await self._pool.execute(_END, digest(session_id), self._clock.now())
