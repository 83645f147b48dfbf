"""Notices of new connections, in `authz_notices`: one per approval, shown to its
person once, on the next page of ours they open in another sign-in session; and, when
SMTP_URL is set, the e-mail telling them of it, in the mail outbox (storage/mail_outbox.py),
written by the same statement."""

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
    device: str | None  # the browser it came from, in a few words ("Firefox on Linux")
    already_connected: bool  # the app held access elsewhere then: a new sign-in of it, not a new app


# The notice, and the e-mail when mail is on ($5), in one statement. Whether the app was
# already connected (a live grant of the same person and app whose code was exchanged)
# is decided now. A new approval in the same browser sign-in as such a grant is a
# step-up, the same sign-in doing more: it is told on the pages, but sends no e-mail.
_ADD = """
WITH g AS (
    SELECT g.id, g.user_id, g.client_id, g.session_hash, g.created_from, g.created_agent, g.scope,
           c.client_name, c.verified_origin, s.name AS school_name
    FROM authz_grants g
    JOIN authz_clients c ON c.client_id = g.client_id
    JOIN authz_schools s ON s.id = g.school_id
    WHERE g.id = $2 AND g.user_id = $1
), before AS (
    SELECT count(*) > 0 AS connected, COALESCE(bool_or(e.session_hash = g.session_hash), false) AS same_sign_in
    FROM authz_grants e JOIN g ON e.user_id = g.user_id AND e.client_id = g.client_id AND e.id <> g.id
    WHERE e.revoked_at IS NULL AND e.last_used_at IS NOT NULL
), notice AS (
    INSERT INTO authz_notices (user_id, grant_id, created_at, session_hash, already_connected)
    SELECT $1, $2, to_timestamp($3), $4, (SELECT connected FROM before)
)
INSERT INTO authz_mail_outbox (kind, user_id, details, created_at)
SELECT 'new_connection', g.user_id,
       jsonb_build_object('client_name', g.client_name, 'verified_origin', g.verified_origin,
                          'school_name', g.school_name, 'device', g.created_agent, 'address', g.created_from,
                          'at', $3::bigint, 'already_connected', b.connected, 'scope', g.scope),
       to_timestamp($3)
FROM g CROSS JOIN before b
WHERE $5 AND NOT b.same_sign_in
"""

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
    UPDATE authz_notices SET seen_at = to_timestamp($3) WHERE id IN (SELECT id FROM due)
    RETURNING grant_id, already_connected
)
SELECT g.id::text AS grant_id, c.client_name, extract(epoch FROM g.created_at)::bigint AS approved_at,
       g.created_from AS approved_from, g.created_agent AS device, seen.already_connected
FROM seen JOIN authz_grants g ON g.id = seen.grant_id LEFT JOIN authz_clients c ON c.client_id = g.client_id
ORDER BY g.created_at
"""


class PgNoticeStore:
    def __init__(self, pool: asyncpg.Pool, *, mail: bool = False) -> None:
        self._pool = pool
        self._mail = mail  # SMTP_URL is set: the e-mail goes into the mail outbox too

    async def add(self, *, user_id: str, grant_id: str, now: int, session_id: str | None) -> None:
        """The notice of a new approval (and its e-mail); `session_id`: the browser
        sign-in it was made in, where it is not shown."""
        session_hash = digest(session_id) if session_id else None
        await self._pool.execute(_ADD, uuid.UUID(user_id), uuid.UUID(grant_id), now, session_hash, self._mail)

    async def take(self, *, user_id: str, session_id: str | None, now: int) -> list[Notice]:
        """The notices to show this person now, in this session; each only once."""
        session_hash = digest(session_id) if session_id else None
        rows = await self._pool.fetch(_TAKE, uuid.UUID(user_id), session_hash, now)
        return [Notice(**dict(r)) for r in rows]
