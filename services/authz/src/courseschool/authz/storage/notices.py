"""Notices of new connections, in `authz_notices`: one per approval, shown to its
person once, on the next page of ours they open in another sign-in session."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from courseschool.common.secrets import digest


class Notice(msgspec.Struct, frozen=True, kw_only=True):
    grant_id: str
    client_name: str | None
    approved_at: int
    approved_from: str | None  # the address the approval came from


_ADD = "INSERT INTO authz_notices (user_id, grant_id, created_at, session_hash) VALUES ($1, $2, to_timestamp($3), $4)"

# What this person has not been told yet, made in another session, of a connection that
# holds (its code was exchanged, it is not revoked), marked seen as it is read.
_TAKE = """
WITH due AS (
    SELECT n.id FROM authz_notices n JOIN authz_grants g ON g.id = n.grant_id
    WHERE n.user_id = $1 AND n.seen_at IS NULL AND n.session_hash IS DISTINCT FROM $2
      AND g.revoked_at IS NULL
      AND (EXISTS (SELECT 1 FROM authz_codes c WHERE c.grant_id = g.id AND c.consumed_at IS NOT NULL)
           OR EXISTS (SELECT 1 FROM authz_refresh_tokens r WHERE r.grant_id = g.id))
    ORDER BY n.id LIMIT 5
    FOR UPDATE OF n SKIP LOCKED
), seen AS (
    UPDATE authz_notices SET seen_at = to_timestamp($3) WHERE id IN (SELECT id FROM due) RETURNING grant_id
)
SELECT g.id::text AS grant_id, c.client_name, extract(epoch FROM g.created_at)::bigint AS approved_at,
       g.created_from AS approved_from
FROM seen JOIN authz_grants g ON g.id = seen.grant_id LEFT JOIN authz_clients c ON c.client_id = g.client_id
ORDER BY g.created_at
"""


class PgNoticeStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def add(self, *, user_id: str, grant_id: str, now: int, session_id: str | None) -> None:
        session_hash = digest(session_id) if session_id else None
        await self._pool.execute(_ADD, uuid.UUID(user_id), uuid.UUID(grant_id), now, session_hash)

    async def take(self, *, user_id: str, session_id: str | None, now: int) -> list[Notice]:
        """The notices to show this person now, in this session; each only once."""
        session_hash = digest(session_id) if session_id else None
        rows = await self._pool.fetch(_TAKE, uuid.UUID(user_id), session_hash, now)
        return [Notice(**dict(r)) for r in rows]
