"""The mail outbox, `authz_mail_outbox`: messages to people, put here in the statement
that records what they tell of, sent from here by mail/delivery.py.

A new connection's message is written by the notice's own statement (storage/notices.py);
a school's ending or blocking of an app by `school_acted` below. The delivery claims one
message at a time (its next attempt pushed a lease ahead, other replicas skip it), so a
lease only has to outlast one send, never a batch of them.

Like the webhook outbox, the delivery's moments are PostgreSQL's alone (`now()`, in the
same statements); `created_at` is the application's (docs/design.md, "One clock").
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import msgspec

NEW_CONNECTION = "new_connection"
SCHOOL_ENDED_ACCESS = "school_ended_access"
SCHOOL_BLOCKED_APP = "school_blocked_app"
# A person's own account (issue 40): a single-use link (its token sealed in `sealed`,
# storage/account_links.py), and what changed on their account (a password, a second
# factor, sessions ended) so that they hear of a change they did not make.
INVITATION = "invitation"
PASSWORD_RESET = "password_reset"
ACCOUNT_CHANGED = "account_changed"
KINDS = (NEW_CONNECTION, SCHOOL_ENDED_ACCESS, SCHOOL_BLOCKED_APP, INVITATION, PASSWORD_RESET, ACCOUNT_CHANGED)


class Claimed(msgspec.Struct, frozen=True, kw_only=True):
    """A message claimed for one try: whom to, what it says, which try this is."""

    id: int
    message_id: str
    kind: str
    recipient: str
    recipient_name: str
    details: dict[str, Any]
    attempts: int
    sealed: bytes | None = None  # what no one may read in the table (a link's token)


class Backlog(msgspec.Struct, frozen=True, kw_only=True):
    pending: int  # neither sent nor abandoned
    retrying: int  # of those, tried and failed at least once
    abandoned: int  # given up on (kept until housekeeping removes them)
    oldest_pending_seconds: float  # how long the oldest pending one has waited (0: none)


# One person per message, however many of their sign-ins ended; never the steward who
# acted (they know). What the message says is taken now: the app's name, how it is known.
_SCHOOL_ACTED = """
INSERT INTO authz_mail_outbox (kind, user_id, details, created_at)
SELECT DISTINCT ON (g.user_id) $2, g.user_id,
       jsonb_build_object('client_name', c.client_name, 'verified_origin', c.verified_origin,
                          'school_name', s.name, 'at', $4::bigint),
       to_timestamp($4)
FROM authz_grants g
JOIN authz_clients c ON c.client_id = g.client_id
JOIN authz_schools s ON s.id = g.school_id
WHERE g.id = ANY($1::uuid[]) AND g.user_id <> $3
ORDER BY g.user_id
"""

_CLAIM = """
UPDATE authz_mail_outbox m SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
FROM authz_users u
WHERE m.id = (
    SELECT id FROM authz_mail_outbox
    WHERE sent_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
      AND (expires_at IS NULL OR expires_at > to_timestamp($2))  -- a link expired: never sent
    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  AND u.id = m.user_id
RETURNING m.id, m.message_id::text, m.kind, u.email AS recipient, u.name AS recipient_name, m.details, m.attempts,
          m.sealed
"""
_SENT = "UPDATE authz_mail_outbox SET sent_at = now(), last_error = NULL, sealed = NULL WHERE id = $1"
_ACCOUNT_CHANGED = """
INSERT INTO authz_mail_outbox (kind, user_id, details, created_at) VALUES ($1, $2, $3, to_timestamp($4))
"""
_FAILED = """
UPDATE authz_mail_outbox SET last_error = $2, next_attempt_at = now() + make_interval(secs => $3),
    abandoned_at = CASE WHEN attempts >= $4 THEN now() END
WHERE id = $1
"""
_BACKLOG = """
SELECT count(*) FILTER (WHERE sent_at IS NULL AND abandoned_at IS NULL) AS pending,
       count(*) FILTER (WHERE sent_at IS NULL AND abandoned_at IS NULL AND attempts > 0) AS retrying,
       count(*) FILTER (WHERE abandoned_at IS NOT NULL) AS abandoned,
       COALESCE(extract(epoch FROM to_timestamp($1) - min(created_at)
                FILTER (WHERE sent_at IS NULL AND abandoned_at IS NULL)), 0)::float8 AS oldest
FROM authz_mail_outbox
"""


class PgMailOutbox:
    def __init__(self, pool: asyncpg.Pool, *, enabled: bool) -> None:
        self._pool = pool
        self.enabled = enabled  # SMTP_URL is set: fill the outbox (else nothing is ever sent)

    async def school_acted(self, grant_ids: list[str], *, blocked: bool, by: str, now: int) -> int:
        """One message to each person whose sign-ins in `grant_ids` the school ended
        (`blocked`: by blocking the app), but the steward `by`; how many were queued."""
        if not self.enabled or not grant_ids:
            return 0
        kind = SCHOOL_BLOCKED_APP if blocked else SCHOOL_ENDED_ACCESS
        status = await self._pool.execute(_SCHOOL_ACTED, [uuid.UUID(g) for g in grant_ids], kind, uuid.UUID(by), now)
        return int(status.rsplit(" ", 1)[-1])

    async def account_changed(self, user_id: str, details: dict[str, Any], *, now: int) -> bool:
        """Tell the person what changed on their account (`details["change"]`); queued or not."""
        if not self.enabled:
            return False
        await self._pool.execute(_ACCOUNT_CHANGED, ACCOUNT_CHANGED, uuid.UUID(user_id), {**details, "at": now}, now)
        return True

    async def claim(self, lease: float, *, now: int) -> Claimed | None:
        """The next message due, leased for `lease` seconds; None when none is due.
        `now`: the application's time, which a link's expiry is in."""
        row = await self._pool.fetchrow(_CLAIM, lease, now)
        if row is None:
            return None
        found = dict(row)
        found["sealed"] = bytes(found["sealed"]) if found["sealed"] is not None else None
        return Claimed(**found)

    async def sent(self, message: int) -> None:
        await self._pool.execute(_SENT, message)

    async def failed(self, message: int, error: str, *, retry_in: float, max_attempts: int) -> None:
        """A failed try: again in `retry_in` seconds, or abandoned after `max_attempts`."""
        await self._pool.execute(_FAILED, message, error, retry_in, max_attempts)

    async def backlog(self, now: int) -> Backlog:
        """What waits, and how long the oldest has (`now`: the application's time, the
        clock `created_at` was written by)."""
        row = await self._pool.fetchrow(_BACKLOG, now)
        return Backlog(
            pending=row["pending"],
            retrying=row["retrying"],
            abandoned=row["abandoned"],
            oldest_pending_seconds=max(0.0, row["oldest"]),
        )
