"""The record of events, in `authz_events`: written in batches by the event recorder
(authz/events.py), read by `admin audit list` and `/internal/admin/audit`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
import msgspec

from courseschool.common.audit_events import WEBHOOK_EVENTS


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
# its outbox by the same statement, each in its stream with its number there
# (storage/webhook_outbox.py), and named for a person reading it: the app's name, the
# school's slug and the person's e-mail next to the ids, as they are when it happened.
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
), hooked AS (
    SELECT w.*, CASE WHEN w.subject IS NOT NULL THEN 'user:' || w.subject
                     WHEN w.client_id IS NOT NULL THEN 'client:' || w.client_id
                     ELSE 'event:' || w.id END AS stream
    FROM written w WHERE $10 AND (w.kind = 'security' OR w.action = ANY($11::text[]))
), numbered AS (
    SELECT h.*, row_number() OVER (PARTITION BY h.stream ORDER BY h.id) + COALESCE(
               (SELECT o.sequence FROM authz_webhook_outbox o
                WHERE o.stream = h.stream AND o.sequence IS NOT NULL ORDER BY o.sequence DESC LIMIT 1), 0) AS sequence
    FROM hooked h
)
INSERT INTO authz_webhook_outbox (event_id, body, stream, sequence, priority)
SELECT n.id, jsonb_build_object(
    'id', n.id, 'at', n.at, 'kind', n.kind, 'action', n.action, 'actor', n.actor, 'source', n.source,
    'subject', n.subject, 'client_id', n.client_id, 'school_id', n.school_id, 'details', n.details,
    'stream', n.stream, 'sequence', n.sequence,
    'client_name', c.client_name, 'school', s.slug, 'email', u.email),
    n.stream, n.sequence, CASE WHEN n.kind = 'security' THEN 0 ELSE 1 END
FROM numbered n
LEFT JOIN authz_clients c ON c.client_id = n.client_id
LEFT JOIN authz_schools s ON s.id = n.school_id
LEFT JOIN authz_users u ON u.id::text = n.subject
ORDER BY n.id
"""
# Outbox rows are numbered one batch at a time across every replica, so that a stream's
# numbers are never given twice and its ids follow them.
_NUMBERING_LOCK = "SELECT pg_advisory_xact_lock(hashtext('authz_webhook_outbox numbering'))"

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


# What an operator's webhook hears besides security events (new connections), from the
# catalogue (common/audit_events.py).
WEBHOOK_ACTIONS = list(WEBHOOK_EVENTS)


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
        if not self._webhook:
            await self._pool.execute(_INSERT, *columns, False, WEBHOOK_ACTIONS)
            return
        async with self._pool.acquire() as connection, connection.transaction():
            await connection.execute(_NUMBERING_LOCK)
            await connection.execute(_INSERT, *columns, True, WEBHOOK_ACTIONS)

    async def query(self, q: EventQuery) -> list[dict[str, Any]]:
        """Newest first (by id: the order they were written in)."""
        rows = await self._pool.fetch(
            _SELECT, q.kind, q.subject, q.client_id, q.school_id, q.action, q.since, q.until, q.before, q.limit
        )
        return [_plain(r) for r in rows]
