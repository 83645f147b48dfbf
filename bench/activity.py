"""The apps-page query (the resource API's activity summary, storage/activity.py, as
`/internal/activity` runs it) with small tables and with a million rows of other people's
activity in each activity table.

A person's own activity (three grants: reads in five areas on each of 30 days, 50
changes each) is written into a database with the resource API's tables; a copy of it
(CREATE DATABASE ... TEMPLATE) then gets `rows` more rows in api_activity_reads and as
many in api_activity_changes, of other grants, users and schools, over the same 30
days. The person's summary (by user, as the connected-apps page asks, and by their grant
ids) is timed on both databases, alternated round by round, so that a change of the
machine's speed falls on both; the verdict is the ratio of the medians.

Usage: python -m bench.activity [--rows 1000000] [--rounds 5] [--queries 200]; or as part
of `python -m bench.run --activity` (with the token check scenario)."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import time
import uuid
from urllib.parse import urlsplit

import asyncpg

from courseschool.common.db import create_pool, migrate
from courseschool.platform.migrate import MIGRATIONS
from courseschool.resource_api.storage.activity import ActivityQuery, PgActivityStore
from tests.support.infra import temporary_database

USER = "bench-activity-user"
SCHOOL = uuid.UUID("00000000-0000-4000-8000-0000000000a1")
GRANTS = [uuid.UUID(int=n + 1) for n in range(3)]
AREAS = ("courses", "students", "members", "posts", "pages")

_OWN_READS = """
INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at)
SELECT g, current_date - d, a, 'bench-app', $2, $3, 1 + d, now() - make_interval(days => d)
FROM unnest($1::uuid[]) AS g, generate_series(0, 29) AS d, unnest($4::text[]) AS a
"""
_OWN_CHANGES = """
INSERT INTO api_activity_changes (at, grant_id, client_id, user_id, school_id, area, item_id, item_name, action)
SELECT now() - make_interval(hours => i * 13), g, 'bench-app', $2, $3, 'students', md5(g::text || i)::uuid,
       'Student ' || i, 'update'
FROM unnest($1::uuid[]) AS g, generate_series(1, 50) AS i
"""
# Others' activity: 20 rows per grant, 20 grants per user, 100 users per school.
_OTHER_READS = """
INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at)
SELECT md5('g' || (i / 20))::uuid, current_date - (i % 20)::integer, 'courses', 'app-' || (i % 7),
       'user-' || (i / 400), md5('s' || (i / 40000))::uuid, 3, now()
FROM generate_series($1::bigint, $2::bigint) AS i
"""
_OTHER_CHANGES = """
INSERT INTO api_activity_changes (at, grant_id, client_id, user_id, school_id, area, item_id, item_name, action)
SELECT now() - make_interval(secs => i % 2592000), md5('g' || (i / 20))::uuid, 'app-' || (i % 7),
       'user-' || (i / 400), md5('s' || (i / 40000))::uuid, 'students', md5('i' || i)::uuid, 'Student', 'update'
FROM generate_series($1::bigint, $2::bigint) AS i
"""
CHUNK = 250_000


async def seed_own(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for service, directory in MIGRATIONS:
            await migrate(conn, service, directory)
        await add_own_activity(conn, GRANTS, USER, SCHOOL)
    finally:
        await conn.close()


async def add_own_activity(conn: asyncpg.Connection, grants: list[uuid.UUID], user: str, school: uuid.UUID) -> None:
    """One person's activity with each of `grants`: reads in five areas on each of 30
    days, 50 changes each."""
    await conn.execute(_OWN_READS, grants, user, school, list(AREAS))
    await conn.execute(_OWN_CHANGES, grants, user, school)
    await conn.execute("VACUUM ANALYZE api_activity_reads")
    await conn.execute("VACUUM ANALYZE api_activity_changes")


async def grow(dsn: str, rows: int) -> float:
    """`rows` more rows in each activity table; seconds taken."""
    started = time.perf_counter()
    conn = await asyncpg.connect(dsn)
    try:
        for first in range(0, rows, CHUNK):
            last = min(first + CHUNK, rows) - 1
            await conn.execute(_OTHER_READS, first, last)
            await conn.execute(_OTHER_CHANGES, first, last)
        # What autovacuum would do soon after such an insert, done before measuring.
        await conn.execute("VACUUM ANALYZE api_activity_reads")
        await conn.execute("VACUUM ANALYZE api_activity_changes")
    finally:
        await conn.close()
    return time.perf_counter() - started


def queries() -> dict[str, ActivityQuery]:
    today = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), dt.UTC)
    since = today - dt.timedelta(days=29)
    return {
        "by user": ActivityQuery(user_id=USER, since=since),
        "by grant ids": ActivityQuery(grant_ids=tuple(str(g) for g in GRANTS), since=since),
    }


async def timed(store: PgActivityStore, query: ActivityQuery, count: int) -> float:
    """The median seconds of one summary, over `count` runs."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        grants = await store.summary(query)
        times.append(time.perf_counter() - started)
    assert len(grants) == len(GRANTS) and all(len(g.changed) == 20 for g in grants)
    return statistics.median(times)


async def blocks(pool: asyncpg.Pool, query: ActivityQuery) -> int:
    """The table and index blocks one summary touches (PostgreSQL's buffer counts of its
    statements, from EXPLAIN ANALYZE): what the tables' size could add, free of the
    machine's load."""
    (reads, reads_args), (changes, changes_args) = PgActivityStore.statements(query)
    changed, changed_args = PgActivityStore.changed_statement([str(g) for g in GRANTS], query.since, 20)
    total = 0
    for sql, args in ((reads, reads_args), (changes, changes_args), (changed, changed_args)):
        plan = (await pool.fetchval("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, *args))[0]["Plan"]
        total += plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
    return total


Figures = dict[str, tuple[float, float, int, int]]  # query -> small s, large s, small blocks, large blocks


async def compare(small_dsn: str, large_dsn: str, *, rounds: int, count: int) -> Figures:
    """Median of rounds of (small, large) seconds per query, alternated round by round,
    and the blocks one summary touches on each side."""
    pools = {
        name: await create_pool(dsn, min_size=1, max_size=1)
        for name, dsn in (("small", small_dsn), ("large", large_dsn))
    }
    try:
        stores = {name: PgActivityStore(pool) for name, pool in pools.items()}
        found: dict[str, dict[str, list[float]]] = {q: {"small": [], "large": []} for q in queries()}
        for n in range(rounds + 1):  # round 0 warms up and is not counted
            order = ("small", "large") if n % 2 == 0 else ("large", "small")
            for name, query in queries().items():
                for side in order:
                    seconds = await timed(stores[side], query, count)
                    if n:
                        found[name][side].append(seconds)
        return {
            name: (
                statistics.median(sides["small"]),
                statistics.median(sides["large"]),
                await blocks(pools["small"], queries()[name]),
                await blocks(pools["large"], queries()[name]),
            )
            for name, sides in found.items()
        }
    finally:
        for pool in pools.values():
            await pool.close()


async def activity_section(admin_url: str, *, rows: int, rounds: int, count: int) -> list[str]:
    async with temporary_database(admin_url, "bench_activity") as small:
        await seed_own(small)
        source = urlsplit(small).path.lstrip("/")
        async with temporary_database(admin_url, f"{source}_large", template=source) as large:
            took = await grow(large, rows)
            figures = await compare(small, large, rounds=rounds, count=count)
    out = [
        "## The apps page's activity query as the tables grow",
        "",
        f"One person's activity (3 grants: reads in 5 areas on 30 days, 50 changes each) summarised as "
        f"`/internal/activity` does (the connected-apps page asks by user or by grant ids), on small tables and "
        f"with {rows:,} rows of others' activity added to each activity table (inserted in {took:.0f} s). "
        f"Median of {count} summaries per round, {rounds} rounds alternated after a warm-up round; medians of "
        f"rounds. In-process store calls over one connection (no HTTP). Blocks: the table and index blocks one "
        f"summary's three statements touch (EXPLAIN ANALYZE BUFFERS), which the machine's load does not move.",
        "",
        "| query | small tables ms | large tables ms | blocks, small | blocks, large | large / small |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, (small_s, large_s, small_b, large_b) in figures.items():
        out.append(
            f"| {name} | {small_s * 1000:.2f} | {large_s * 1000:.2f} | {small_b} | {large_b} | "
            f"{large_s / small_s:.2f} |"
        )
    worst = max(large_s / small_s for small_s, large_s, _, _ in figures.values())
    out += [
        "",
        f"- Worst ratio: {worst:.2f} (the target: at most 1.10).",
        "- Why the query alone grows a little (EXPLAIN ANALYZE of the statements as asyncpg prepares them): on "
        "the small tables PostgreSQL keeps one generic plan and hashes the 450 read rows into 15 groups; on the "
        "large ones it plans the grant-id statements afresh each call (about 0.07 ms each; its generic estimate "
        "for `grant_id = ANY($1)` is worse than the custom one) and sorts the rows before grouping them. Both "
        "sides read the same rows through an index; the blocks above differ by the indexes' extra level. The "
        "page below is what the target names.",
        "",
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of others' activity in each table")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200, help="summaries timed per round and side")
    args = parser.parse_args()
    from bench.stack import PG

    print("\n".join(asyncio.run(activity_section(PG, rows=args.rows, rounds=args.rounds, count=args.queries))))


if __name__ == "__main__":
    main()
