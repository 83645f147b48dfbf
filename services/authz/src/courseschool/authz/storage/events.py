"""The record of events, in `authz_events`: written in batches by the event recorder
(authz/events.py), read by `admin audit list` and `/internal/admin/audit`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
import msgspec


class EventRow(msgspec.Struct, frozen=True, kw_only=True):
    at: datetime
    kind: str  # admin, user or security
    action: str
    actor: str
    source: str | None
    subject: str | None
    client_id: str | None
    grant_id: str | None  # names the grant concerned: its user, client and school fill what is missing
    details: dict[str, Any]


class EventQuery(msgspec.Struct, frozen=True, kw_only=True):
    kind: str | None = None
    subject: str | None = None
    client_id: str | None = None
    school_id: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before: int | None = None  # the page's cursor: events older than this id
    limit: int = 100


# One statement per batch. The school is the subject's; an event about a grant (its
# `grant_id`) takes the grant's user and client where it names none itself. With $10,
# the events an operator's webhook wants (security events, new connections) are put in
# its outbox by the same statement.
_INSERT = """
WITH written AS (
    INSERT INTO authz_events (at, kind, action, actor, source, subject, client_id, school_id, details)
    SELECT e.at, e.kind, e.action, e.actor, e.source,
           COALESCE(e.subject, g.user_id::text), COALESCE(e.client_id, g.client_id),
           COALESCE(u.school_id, g.school_id), e.details
    FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                $8::text[], $9::jsonb[])
         WITH ORDINALITY AS e(at, kind, action, actor, source, subject, client_id, grant_id, details, n)
    LEFT JOIN authz_grants g ON g.id::text = e.grant_id
    LEFT JOIN authz_users u ON u.id::text = COALESCE(e.subject, g.user_id::text)
    ORDER BY e.n
    RETURNING id, at, kind, action, actor, source, subject, client_id, school_id, details
)
INSERT INTO authz_webhook_outbox (event_id, body)
SELECT id, jsonb_build_object(
    'id', id, 'at', at, 'kind', kind, 'action', action, 'actor', actor, 'source', source,
    'subject', subject, 'client_id', client_id, 'school_id', school_id, 'details', details)
FROM written WHERE $10 AND (kind = 'security' OR action = ANY($11::text[]))
"""

_SELECT = """
SELECT id, at, kind, action, actor, source, subject, client_id, school_id::text, details FROM authz_events
WHERE ($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR subject = $2)
  AND ($3::text IS NULL OR client_id = $3) AND ($4::uuid IS NULL OR school_id = $4)
  AND ($5::text IS NULL OR action = $5) AND ($6::timestamptz IS NULL OR at >= $6)
  AND ($7::timestamptz IS NULL OR at < $7) AND ($8::bigint IS NULL OR id < $8)
ORDER BY id DESC LIMIT $9
"""


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in dict(row).items()}


# What an operator's webhook hears besides security events: a new connection.
WEBHOOK_ACTIONS = ["consent_given", "consent_remembered"]


class PgEventStore:
    def __init__(self, pool: asyncpg.Pool, *, webhook: bool = False) -> None:
        self._pool = pool
        self._webhook = webhook  # EVENTS_WEBHOOK_URL is set: fill its outbox

    async def insert(self, rows: list[EventRow]) -> None:
        if not rows:
            return
        columns = [
            [r.at for r in rows],
            [r.kind for r in rows],
            [r.action for r in rows],
            [r.actor for r in rows],
            [r.source for r in rows],
            [r.subject for r in rows],
            [r.client_id for r in rows],
            [r.grant_id for r in rows],
            [r.details for r in rows],
        ]
        await self._pool.execute(_INSERT, *columns, self._webhook, WEBHOOK_ACTIONS)

    async def query(self, q: EventQuery) -> list[dict[str, Any]]:
        """Newest first (by id: the order they were written in)."""
        rows = await self._pool.fetch(
            _SELECT, q.kind, q.subject, q.client_id, q.school_id, q.action, q.since, q.until, q.before, q.limit
        )
        return [_plain(r) for r in rows]
