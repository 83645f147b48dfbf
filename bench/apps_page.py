"""The activity section of a run: the connected-apps page itself, loaded by its signed-in
person on small tables and on a million rows of others' activity (after the activity
query alone, bench/activity.py); and the report of `--activity`, which runs only this and
the token check with activity recording."""

from __future__ import annotations

import statistics
import subprocess
from pathlib import Path

import asyncpg

from bench.activity import add_own_activity, grow
from bench.harness import start, stop, wrk
from bench.inputs import owner_tokens
from bench.results import TOKEN_READ_UNCACHED, Run
from bench.stack import EMAIL, PASSWORD, RS_SECRET, copy_of, platform_env, redis_url, scratch_database, server_command
from tests.support.net import free_port
from tests.support.oauth_client import Human


async def apps_page_section(server: str, tmp: Path, *, rows: int, rounds: int, seconds: int) -> tuple[list[str], float]:
    """The page the target names, as its person loads it: the demo owner signed in, three
    apps connected through the pages, each with a month of activity (bench/activity.py's
    own activity, on the owner's real grant ids); small tables against a copy with `rows`
    more rows of others' activity in each table. One platform process per database, both
    pinned to the server's core, only one loaded at a time, alternated round by round
    (the order flipped each round, a warm-up round not counted); the ratio of the medians
    of throughput, small / large. One connection: each page's time is the whole of it (the
    worker, the resource API's summary, PostgreSQL), not hidden behind other pages being
    served meanwhile. (The section's lines, that ratio.)"""
    async with scratch_database("apps") as small:
        session = await _seed(server, tmp, small)
        async with copy_of(small, "large") as large:
            took = await grow(large, rows)
            found = await _alternate(server, tmp, (("small", small), ("large", large)), session, rounds, seconds)
    return _page_lines(found, rows, took, rounds, seconds)


async def _seed(server: str, tmp: Path, small: str) -> str:
    """The demo owner's three apps connected through the pages, each grant given the month
    of activity; the owner's session, signed in."""
    from courseschool.platform.run import prepare

    await prepare(small, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start(
        server_command(server, port),
        platform_env(small, redis_url(), port, "jwt", tmp / "apps-seed"),
        f"{base}/readyz",
        tmp / "apps-seed.log",
    )
    try:
        for _ in range(3):
            await owner_tokens(base, "openid courses:read")
        async with Human(base) as person:
            session = await person.sign_in(email=EMAIL, password=PASSWORD)
    finally:
        stop(process)
    conn = await asyncpg.connect(small)
    try:
        grants = await conn.fetch(
            "SELECT g.id, g.user_id::text, g.school_id FROM authz_grants g JOIN authz_users u ON u.id = g.user_id "
            "WHERE u.email_canonical = $1 AND g.revoked_at IS NULL",
            EMAIL,
        )
        assert len(grants) == 3, grants
        await add_own_activity(conn, [g["id"] for g in grants], grants[0]["user_id"], grants[0]["school_id"])
    finally:
        await conn.close()
    return session


async def _alternate(
    server: str, tmp: Path, databases: tuple[tuple[str, str], ...], session: str, rounds: int, seconds: int
) -> dict[str, list[dict[str, float]]]:
    """The page loaded on one platform process per database, alternated round by round;
    the counted runs of each side."""
    processes: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for side, database in databases:
            port = free_port()
            processes[side] = (
                start(
                    server_command(server, port),
                    platform_env(database, redis_url(), port, "jwt", tmp / f"apps-{side}"),
                    f"http://127.0.0.1:{port}/readyz",
                    tmp / f"apps-{side}.log",
                ),
                f"http://127.0.0.1:{port}/oauth/apps",
            )
        cookie = {"COOKIE": f"cs_session={session}", "MUST_HAVE": "read courses 465 times"}
        found: dict[str, list[dict[str, float]]] = {"small": [], "large": []}
        for n in range(rounds + 1):
            for side in ("small", "large") if n % 2 == 0 else ("large", "small"):
                result = wrk(processes[side][1], seconds, script="cookie.lua", env=cookie, connections=1)
                if result["failures"]:
                    raise RuntimeError(f"the apps page failed {result['failures']} times ({side} tables)")
                if n:
                    found[side].append(result)
    finally:
        for process, _ in processes.values():
            stop(process)
    return found


def _page_lines(
    found: dict[str, list[dict[str, float]]], rows: int, took: float, rounds: int, seconds: int
) -> tuple[list[str], float]:
    """The section's lines, and the ratio of the medians of throughput, small / large."""
    small_rps = statistics.median(r["rps"] for r in found["small"])
    large_rps = statistics.median(r["rps"] for r in found["large"])
    p50 = {side: statistics.median(r["p50"] for r in runs) for side, runs in found.items()}
    ratio = small_rps / large_rps
    lines = [
        "### The connected-apps page itself",
        "",
        f"The demo owner signed in, three apps connected through the pages, each with the month of activity above "
        f"on its real grant id; the same database copied and given {rows:,} rows of others' activity in each "
        f"activity table (inserted in {took:.0f} s). One platform process per database (granian, one worker, both "
        f"pinned to the server's core, one loaded at a time), wrk -c1 (one page at a time), {seconds} s a run, "
        f"{rounds} rounds alternated after a warm-up round; medians of rounds. Every answer a 200 with the page's "
        "activity.",
        "",
        "| tables | pages/s | p50 ms |",
        "|---|---:|---:|",
        f"| small | {small_rps:.0f} | {p50['small']:.2f} |",
        f"| {rows:,} more rows each | {large_rps:.0f} | {p50['large']:.2f} |",
        "",
        f"- The page's time with the large tables: {ratio:.2f} of its small-table time (the target: at most 1.10).",
        "",
    ]
    return lines, ratio


def activity_report(run: Run, seconds: int, repeats: int) -> str:
    """`--activity`: the token check with activity recording against an anonymous read
    (both uncached), and the apps-page query as the tables grow. Printed, not written to
    RESULTS.md (a partial run)."""
    rps = {label: r["rps"] for label, r in run.rows}
    anonymous = rps["resource read, anonymous, catalogue cache off (same query)"]
    cost = 1 - rps[TOKEN_READ_UNCACHED] / anonymous
    run.checks.insert(
        0,
        ("token check with activity recording at most 10% of an uncached anonymous read", cost, cost <= 0.10, "{:.1%}"),
    )
    lines = [
        "# Activity recording (python -m bench.run --activity; a partial run, not RESULTS.md)",
        "",
        f"wrk -t1 -c32, {seconds} s per scenario, median of {repeats}, the two reads alternated.",
        "",
        "| scenario | req/s | p50 ms | p99 ms | non-2xx |",
        "|---|---:|---:|---:|---:|",
        *[
            f"| {label} | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {100 * r['errors']:.1f}% |"
            for label, r in run.rows
        ],
        "",
        *[f"- {n}" for n in run.notes],
        "",
        "| target | measured | met |",
        "|---|---:|---|",
        *[f"| {name} | {fmt.format(value)} | {'yes' if met else 'no'} |" for name, value, met, fmt in run.checks],
        "",
    ]
    for section in run.sections:
        lines += section
    return "\n".join(lines)
