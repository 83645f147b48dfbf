"""Storage of what each grant did (migrations/0003_activity.sql): read counts per grant,
area and day, written in batches (activity.py); the changes, written by the statement
that makes the change (items.py, files.py, with `RECORD_CHANGE`); the summary the
authorization server's pages ask for (`/internal/activity`); and their retention.

The summary finds its rows through an index whatever it is asked for: a set of grants
(`api_activity_*_grant` / the reads' primary key), a user (`..._user`) or a school
(`..._school`), each with the period as the index's second column, so that its cost
follows the rows of what was asked, not the size of the tables (tests/integration/
test_activity.py reads the plans; bench/activity.py times it at a million rows).

Two clocks, each with one job. PostgreSQL's records: a change's `at` is the
`clock_timestamp()` of the statement that made it (items.py, files.py), so that a
change and its record carry one instant. The application's decides: the summary's
period (`ActivityQuery.since`), a read's day and time (`ReadCounter`) and what
retention removes (`RETENTION`: now is a parameter) all come from its `Clock`, so a
frozen clock in the tests holds for every decision."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from courseschool.common.activity import ChangedItem, GrantActivity
from courseschool.common.housekeeping import SweepRule, sweep

# A change's record, as a data-modifying CTE after the change's own (`changed`, with the
# columns `at`, `id`, `school_id` and `name`): one statement, so one transaction, writes
# both or neither. {n} is the number of the first of the actor's five parameters (grant,
# client, user, area, action); with no actor (the demo seed) nothing is recorded.
RECORD_CHANGE = """
recorded AS (
    INSERT INTO api_activity_changes
        (at, grant_id, client_id, user_id, school_id, area, item_id, item_name, action)
    SELECT changed.at, {g}::uuid, {c}::text, {u}::text, changed.school_id, {a}::text, changed.id,
           changed.name, {x}::text
    FROM changed WHERE {c}::text IS NOT NULL
)"""


def record_change(first: int) -> str:
    """`RECORD_CHANGE` with the actor's parameters numbered from `first`."""
    g, c, u, a, x = (f"${n}" for n in range(first, first + 5))
    return RECORD_CHANGE.format(g=g, c=c, u=u, a=a, x=x)


class Actor(msgspec.Struct, frozen=True, kw_only=True):
    """Who makes a change: the token's grant, client and user (its school is the item's)."""

    grant_id: str | None
    client_id: str
    user_id: str

    def parameters(self, area: str, action: str) -> tuple[uuid.UUID | None, str, str, str, str]:
        return (_uuid_or_none(self.grant_id), self.client_id, self.user_id, area, action)


NO_ACTOR: tuple[None, None, None, None, None] = (None, None, None, None, None)


def actor_parameters(actor: Actor | None, area: str, action: str) -> tuple[object, ...]:
    return NO_ACTOR if actor is None else actor.parameters(area, action)


def _uuid_or_none(value: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if value else None
    except ValueError:
        return None


class ReadCount(msgspec.Struct, frozen=True):
    """Reads of one grant in one area on one day, and the last of them (seconds)."""

    grant_id: str
    client_id: str
    user_id: str
    school_id: str
    area: str
    day: int  # days since the epoch (UTC)
    reads: int
    last_at: int


_ADD_READS = """
INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at)
SELECT * FROM unnest($1::uuid[], $2::date[], $3::text[], $4::text[], $5::text[], $6::uuid[], $7::bigint[],
                     $8::timestamptz[])
ON CONFLICT (grant_id, day, area) DO UPDATE
SET reads = api_activity_reads.reads + EXCLUDED.reads,
    last_at = GREATEST(api_activity_reads.last_at, EXCLUDED.last_at)
"""

# What the summary may be asked for, as conditions on either table ($n: their parameter).
_FILTERS = {
    "grant_ids": "grant_id = ANY(${n}::uuid[])",
    "user_id": "user_id = ${n}::text",
    "school_id": "school_id = ${n}::uuid",
}
_READS = """
SELECT grant_id::text, area, sum(reads)::bigint AS n, max(last_at) AS last_at,
       min(client_id) AS client_id, min(user_id) AS user_id, min(school_id::text) AS school_id
FROM api_activity_reads WHERE {where} AND day >= ${since}::date
GROUP BY grant_id, area
"""
_CHANGES = """
SELECT grant_id::text, area, count(*) AS n, max(at) AS last_at,
       min(client_id) AS client_id, min(user_id) AS user_id, min(school_id::text) AS school_id
FROM api_activity_changes WHERE {where} AND grant_id IS NOT NULL AND at >= ${since}::timestamptz
GROUP BY grant_id, area
"""
# The newest changes of each grant, newest first: one index range per grant.
_CHANGED = """
SELECT g.id::text AS grant_id, c.area, c.item_id::text, c.item_name, c.action, c.at
FROM unnest($1::uuid[]) AS g(id)
CROSS JOIN LATERAL (
    SELECT area, item_id, item_name, action, at, id FROM api_activity_changes
    WHERE grant_id = g.id AND at >= $2 ORDER BY at DESC, id DESC LIMIT $3
) AS c
ORDER BY g.id, c.at DESC, c.id DESC
"""

# What retention removes, by the application's clock ($2: now, $3: the retention in days).
RETENTION: dict[str, SweepRule] = {
    "activity_reads": SweepRule(
        "api_activity_reads", "ctid", "day < ($2::timestamptz AT TIME ZONE 'UTC')::date - $3::integer"
    ),
    "activity_changes": SweepRule(
        "api_activity_changes", "id", "at < $2::timestamptz - make_interval(days => $3::integer)"
    ),
}


class ActivityQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Whose activity (any of: these grants, this user, this school; all that are given
    must hold) since when, and how many changed items to list per grant."""

    grant_ids: tuple[str, ...] = ()
    user_id: str | None = None
    school_id: str | None = None
    since: dt.datetime  # the start of the period's first day, UTC
    changed_limit: int = 20


class PgActivityStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def add_reads(self, counts: Sequence[ReadCount]) -> None:
        """Add counts (one statement; at most one count per grant, day and area)."""
        await self._pool.execute(
            _ADD_READS,
            [uuid.UUID(c.grant_id) for c in counts],
            [_EPOCH + dt.timedelta(days=c.day) for c in counts],
            [c.area for c in counts],
            [c.client_id for c in counts],
            [c.user_id for c in counts],
            [uuid.UUID(c.school_id) for c in counts],
            [c.reads for c in counts],
            [dt.datetime.fromtimestamp(c.last_at, dt.UTC) for c in counts],
        )

    @staticmethod
    def statements(query: ActivityQuery) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
        """The summary's two aggregates (reads, changes) for `query`, with their arguments."""
        where, args = _where(query)
        since = len(args) + 1  # the period's parameter, after the conditions'
        reads = _READS.format(where=where, since=since)
        changes = _CHANGES.format(where=where, since=since)
        return (reads, [*args, query.since.date()]), (changes, [*args, query.since])

    @staticmethod
    def changed_statement(grant_ids: Sequence[str], since: dt.datetime, limit: int) -> tuple[str, list[Any]]:
        """The newest changes of each of `grant_ids` since `since`, at most `limit` each."""
        return _CHANGED, [[uuid.UUID(g) for g in grant_ids], since, limit]

    async def summary(self, query: ActivityQuery) -> list[GrantActivity]:
        """Each grant that acted in the period, the one that acted last first."""
        (reads_sql, reads_args), (changes_sql, changes_args) = self.statements(query)
        reads = await self._pool.fetch(reads_sql, *reads_args)
        changes = await self._pool.fetch(changes_sql, *changes_args)
        grants: dict[str, GrantActivity] = {}
        last: dict[str, dt.datetime] = {}
        for rows, kind in ((reads, "reads"), (changes, "changes")):
            for row in rows:
                grant = grants.get(row["grant_id"])
                if grant is None:
                    grant = grants[row["grant_id"]] = GrantActivity(
                        grant_id=row["grant_id"],
                        client_id=row["client_id"],
                        user_id=row["user_id"],
                        school_id=row["school_id"],
                        reads={},
                        changes={},
                        changed=[],
                        last_acted=None,
                    )
                getattr(grant, kind)[row["area"]] = int(row["n"])
                if row["grant_id"] not in last or last[row["grant_id"]] < row["last_at"]:
                    last[row["grant_id"]] = row["last_at"]
        changed_grants = sorted({row["grant_id"] for row in changes})
        if changed_grants and query.changed_limit:
            sql, args = self.changed_statement(changed_grants, query.since, query.changed_limit)
            for row in await self._pool.fetch(sql, *args):
                grants[row["grant_id"]].changed.append(
                    ChangedItem(
                        area=row["area"],
                        item_id=row["item_id"],
                        name=row["item_name"],
                        action=row["action"],
                        at=row["at"].isoformat(),
                    )
                )
        for grant_id, grant in grants.items():
            grant.last_acted = last[grant_id].isoformat()
        return sorted(grants.values(), key=lambda g: last[g.grant_id], reverse=True)

    async def sweep(self, retention_days: int, *, now: int, batch: int, rounds: int = 10) -> dict[str, int]:
        """Remove the activity older than `retention_days` before `now` (the application's
        clock, seconds), in bounded batches."""
        arguments = (dt.datetime.fromtimestamp(now, dt.UTC), retention_days)
        return await sweep(self._pool, RETENTION, {name: arguments for name in RETENTION}, batch=batch, rounds=rounds)


_EPOCH = dt.date(1970, 1, 1)


def _where(query: ActivityQuery) -> tuple[str, list[Any]]:
    """The summary's conditions (only ever from `_FILTERS`) and their arguments."""
    conditions: list[str] = []
    args: list[Any] = []
    given: dict[str, Any] = {
        "grant_ids": [uuid.UUID(g) for g in query.grant_ids] if query.grant_ids else None,
        "user_id": query.user_id,
        "school_id": uuid.UUID(query.school_id) if query.school_id else None,
    }
    for name, value in given.items():
        if value is not None:
            args.append(value)
            conditions.append(_FILTERS[name].replace("${n}", f"${len(args)}"))
    if not conditions:
        raise ValueError("an activity query names grants, a user or a school")
    return " AND ".join(conditions), args
