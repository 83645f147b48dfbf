"""The webhook outbox, `authz_webhook_outbox`: security events and new connections for
the operator's webhook, put here by the statement that records the event
(storage/events.py), sent from here by webhook.py.

Each delivery belongs to a stream, the person the event concerns (`user:<id>`), else
the client (`client:<id>`), else the event alone, and carries its number in that stream
(`sequence`, from 1). Only the oldest delivery of a stream still to go can be claimed,
so a receiver hears each person's events in the order they happened; streams go side
by side, so a stream whose delivery keeps failing (its backoff) holds back no other.
Security events are claimed before new connections (`priority`), oldest first: a flood
of connections never makes a security event wait (issue 38, T4-3 and item 10).

A claim takes one delivery (its next attempt pushed a lease ahead, other replicas skip
it). The delivery's moments are PostgreSQL's alone (`now()`, in the same statements);
the backlog's age is measured from the event's `at`, the application's time, with the
application's clock (docs/design.md, "One clock").
"""

from __future__ import annotations

from typing import Any

import asyncpg
import msgspec

_CLAIM = """
UPDATE authz_webhook_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
WHERE id = (
    SELECT o.id FROM authz_webhook_outbox o
    WHERE o.delivered_at IS NULL AND o.abandoned_at IS NULL AND o.next_attempt_at <= now()
      AND NOT EXISTS (
          SELECT 1 FROM authz_webhook_outbox e
          WHERE e.stream = o.stream AND e.id < o.id AND e.delivered_at IS NULL AND e.abandoned_at IS NULL)
    ORDER BY COALESCE(o.priority, 0), o.id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, body, attempts
"""  # the head of its stream only: a later one waits until the earlier is delivered or abandoned
_DELIVERED = "UPDATE authz_webhook_outbox SET delivered_at = now(), last_error = NULL WHERE id = $1"
_FAILED = """
UPDATE authz_webhook_outbox SET last_error = $2, next_attempt_at = now() + make_interval(secs => $3),
    abandoned_at = CASE WHEN attempts >= $4 THEN now() END
WHERE id = $1
"""
# Delivered rows stay as long as their event (EVENT_RETENTION): the figures read only the
# pending ones (the partial index authz_webhook_outbox_due) and the abandoned ones (the
# partial index authz_webhook_outbox_abandoned), never the whole table.
_BACKLOG = """
SELECT count(*) AS pending, count(*) FILTER (WHERE o.attempts > 0) AS retrying,
       (SELECT count(*) FROM authz_webhook_outbox WHERE abandoned_at IS NOT NULL) AS abandoned,
       COALESCE(extract(epoch FROM to_timestamp($1) - min(e.at)), 0)::float8 AS oldest
FROM authz_webhook_outbox o JOIN authz_events e ON e.id = o.event_id
WHERE o.delivered_at IS NULL AND o.abandoned_at IS NULL
"""


class Claimed(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    body: dict[str, Any]
    attempts: int  # this try's number


class Backlog(msgspec.Struct, frozen=True, kw_only=True):
    pending: int  # neither delivered nor abandoned
    retrying: int  # of those, tried and failed at least once
    abandoned: int  # given up on (kept until the event's retention removes them)
    oldest_pending_seconds: float  # how long the oldest pending one's event has waited (0: none)


class PgWebhookOutbox:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def claim(self, lease: float) -> Claimed | None:
        """The next delivery due that heads its stream, leased for `lease` seconds."""
        row = await self._pool.fetchrow(_CLAIM, lease)
        return Claimed(id=row["id"], body=row["body"], attempts=row["attempts"]) if row else None

    async def delivered(self, delivery: int) -> None:
        await self._pool.execute(_DELIVERED, delivery)

    async def failed(self, delivery: int, error: str, *, retry_in: float, max_attempts: int) -> None:
        """A failed try: again in `retry_in` seconds, or abandoned after `max_attempts`."""
        await self._pool.execute(_FAILED, delivery, error, retry_in, max_attempts)

    async def backlog(self, now: int) -> Backlog:
        row = await self._pool.fetchrow(_BACKLOG, now)
        return Backlog(
            pending=row["pending"],
            retrying=row["retrying"],
            abandoned=row["abandoned"],
            oldest_pending_seconds=max(0.0, row["oldest"]),
        )
