"""A run's measurements in their order: the framework ceiling (bench/ceiling.py), then on
the platform in each token-validation mode the documents, the reads with and without a
token, the side-by-side section and the interactive flow; scale-out and growth on the same
database; the activity section; and the main table with the targets."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bench.activity import activity_section
from bench.apps_page import activity_report, apps_page_section
from bench.growth import growing_tables
from bench.harness import CORES, ROOT, median_of, rss_mb, start, stop, wrk
from bench.inputs import claims, flow_latency, owner_tokens
from bench.results import TOKEN_READ_UNCACHED, Run, targets
from bench.scale_out import scale_out
from bench.sides import compare_with_peer, platform_side
from bench.stack import EMAIL, PASSWORD, PG, RS_SECRET, platform_env, redis_url, scratch_database, server_command
from tests.support.net import free_port


class MainTable:
    """The main table's rows as they are measured: wrk on a URL `repeats` times, the
    median recorded under the row's name (and printed)."""

    def __init__(self, run: Run, seconds: int, repeats: int) -> None:
        self.run, self.seconds, self.repeats = run, seconds, repeats

    def record(self, name: str, runs: list[dict[str, float]]) -> dict[str, float]:
        result = median_of(runs)
        self.run.rows.append((name, result))
        print(f"{name}: {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms", flush=True)
        return result

    def measure(self, name: str, url: str, *, env: dict[str, str] | None = None, **kw: object) -> dict[str, float]:
        """`{n}` in an env value becomes the repeat's number: single-use bodies are never reused."""
        runs = [
            wrk(url, self.seconds, env={k: v.replace("{n}", str(n)) for k, v in (env or {}).items()}, **kw)  # type: ignore[arg-type]
            for n in range(self.repeats)
        ]
        return self.record(name, runs)

    def reads(self, token: str, courses: str, names: tuple[str, str]) -> tuple[dict[str, float], dict[str, float]]:
        """The same page of courses read anonymously (by the school's id) and with a token,
        the two alternated repeat by repeat (the order flipped each time), so that a change
        of the machine's speed during the pair falls on both and the token's cost is read
        from their difference."""
        school = claims(token)["school_id"]
        pair = [
            (names[0], f"{courses}&published=true&school={school}", ""),
            (names[1], f"{courses}&published=true", token),
        ]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in pair}
        for n in range(self.repeats):
            for name, url, bearer in pair if n % 2 == 0 else pair[::-1]:
                runs[name].append(wrk(url, self.seconds, script="bearer.lua", env={"ACCESS_TOKEN": bearer}))
        anon, authed = (self.record(name, runs[name]) for name, _, _ in pair)
        return anon, authed


async def bench(
    seconds: int,
    repeats: int,
    server: str = "granian",
    only: str = "",
    *,
    rounds: int = 5,
    growth_levels: list[int] | None = None,
    scale: bool = True,
    activity_rows: int = 1_000_000,
) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="cs-bench-"))
    run = Run()
    table = MainTable(run, seconds, repeats)
    if only != "activity":
        _framework_ceiling(table, server, tmp)

    from courseschool.platform.run import prepare

    async with scratch_database("bench") as dsn:
        await prepare(dsn, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
        modes = {"": ("jwt", "uncached", "introspection"), "compare": ("jwt",), "activity": ("uncached",)}[only]
        for mode in modes:
            await _in_mode(table, mode, only, dsn, server, tmp, rounds)
        if scale and not only and CORES > 1:
            run.sections.append(await scale_out(run, dsn, server, tmp, seconds, rounds))
        if growth_levels and not only:
            run.sections.append(await growing_tables(run, dsn, server, tmp, seconds, growth_levels, rounds))
    if only in ("", "activity"):
        section = await activity_section(PG, rows=activity_rows, rounds=rounds, count=200)
        page, ratio = await apps_page_section(server, tmp, rows=activity_rows, rounds=rounds, seconds=seconds)
        run.sections.append(section + page)
        run.checks.append(
            (
                f"connected-apps page with {activity_rows:,} more activity rows within 10% of its small-table time",
                ratio,
                ratio <= 1.10,
                "{:.2f}",
            )
        )
    if only == "activity":
        return activity_report(run, seconds, repeats)
    return _results(run, seconds, repeats, server, only, rounds)


def _framework_ceiling(table: MainTable, server: str, tmp: Path) -> None:
    """The bare endpoint (bench/ceiling.py) on the same server and options: the first row."""
    port = free_port()
    ceiling = start(
        server_command(server, port, "bench.ceiling:app"),
        {**os.environ, "PYTHONPATH": str(ROOT)},
        f"http://127.0.0.1:{port}/ceiling",
        tmp / "ceiling.log",
    )
    try:
        table.measure("framework ceiling (bare endpoint)", f"http://127.0.0.1:{port}/ceiling")
    finally:
        stop(ceiling)


async def _in_mode(table: MainTable, mode: str, only: str, dsn: str, server: str, tmp: Path, rounds: int) -> None:
    """The platform in one token-validation mode ("uncached": JWT with the anonymous
    catalogue cache off) on its own process: the rows of that mode and its RSS."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = platform_env(dsn, redis_url(), port, "jwt" if mode == "uncached" else mode, tmp / mode)
    if mode != "jwt":  # the anonymous catalogue cache off: two reads that differ by the bearer check
        env["CATALOGUE_CACHE_TTL"] = "0"
    process = start(server_command(server, port), env, f"{base}/readyz", tmp / f"{mode}.log")
    try:
        idle = rss_mb(process)
        _reg, tokens = await owner_tokens(base, "openid courses:read")
        token_env = {"ACCESS_TOKEN": tokens["access_token"]}
        courses = f"{base}/api/v1/courses?limit=20"
        if only == "compare":  # a short comparison of servers
            table.measure(
                "discovery: /.well-known/oauth-authorization-server",
                f"{base}/.well-known/oauth-authorization-server",
            )
            table.measure(
                "resource read, bearer token (JWT mode)",
                f"{courses}&published=true",
                script="bearer.lua",
                env=token_env,
            )
        elif mode == "jwt":
            await _documents_and_token_path(table, process, base, dsn, tokens["access_token"], tmp, rounds)
        else:
            _token_check(table, mode, tokens["access_token"], courses)
        loaded = rss_mb(process)
        table.run.notes.append(
            f"RSS of the all-in-one process ({mode} mode): {idle:.0f} MiB idle, {loaded:.0f} MiB after load."
        )
    finally:
        stop(process)


async def _documents_and_token_path(
    table: MainTable, process: subprocess.Popen[bytes], base: str, dsn: str, token: str, tmp: Path, rounds: int
) -> None:
    """JWT mode: the documents, the course reads, the side-by-side section (the token
    paths' rows) and the interactive flow."""
    table.measure(
        "discovery: /.well-known/oauth-authorization-server",
        f"{base}/.well-known/oauth-authorization-server",
    )
    table.measure("JWKS", f"{base}/api/oauth/jwks")
    table.reads(
        token,
        f"{base}/api/v1/courses?limit=20",
        ("resource read, anonymous (same query)", "resource read, bearer token (JWT mode)"),
    )
    ours = await platform_side(process, base, dsn, token)
    await compare_with_peer(table.run, ours, tmp, table.seconds, rounds)
    latency = await flow_latency(base, 5)
    table.run.notes.append(
        f"Full interactive flow (register, authorize, sign in, consent, token, first API "
        f"call), median of 5: {latency * 1000:.0f} ms."
    )


def _token_check(table: MainTable, mode: str, token: str, courses: str) -> None:
    """Uncached (JWT) and introspection: the token check's cost against the same read."""
    label = "JWT" if mode == "uncached" else "introspection"
    names = (
        (
            "resource read, anonymous, catalogue cache off (same query)",
            TOKEN_READ_UNCACHED,
        )
        if mode == "uncached"
        else (
            "resource read, anonymous, catalogue cache off (introspection-mode server)",
            "resource read, bearer token (introspection mode, warm)",
        )
    )
    anon, authed = table.reads(token, courses, names)
    table.run.notes.append(
        f"Token check cost in {label} mode, the grant's activity recorded (the read counted, "
        f"flushed to Redis and drained to PostgreSQL every ACTIVITY_FLUSH_INTERVAL): "
        f"{100 * (1 - authed['rps'] / anon['rps']):.1f}% of an anonymous read's throughput, both "
        "uncached (CATALOGUE_CACHE_TTL=0), alternated in the same server."
    )


def _results(run: Run, seconds: int, repeats: int, server: str, only: str, rounds: int) -> str:
    """RESULTS.md's figures: the main table, its notes, the targets and the sections."""
    rows, notes = run.rows, run.notes
    ceiling_rps = rows[0][1]["rps"]
    lines = [
        "# Benchmark results",
        "",
        f"One run of `make bench` on this machine ({CORES} cores; server pinned to core 0, wrk to core 1; "
        f"PostgreSQL and Redis unpinned), wrk -t1 -c32, {seconds} s per scenario, median of {repeats}"
        + (
            ""
            if only
            else f" (the token endpoint and introspection: median of the {rounds} rounds of the side-by-side section)"
        )
        + ". The "
        f"all-in-one process (the three apps behind the path router) on {server}, one worker, LOG_LEVEL=info "
        "(a JSON line per request, as in production), against real PostgreSQL and Redis"
        + (
            "; granian serves from the packages the image ships and no others (bench/shipped.py)."
            if server == "granian"
            else "."
        ),
        "",
        "| scenario | req/s | ratio to ceiling | p50 ms | p99 ms | non-2xx |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        lines.append(
            f"| {label} | {r['rps']:.0f} | {r['rps'] / ceiling_rps:.2f} | {r['p50']:.2f} | "
            f"{r['p99']:.2f} | {100 * r['errors']:.1f}% |"
        )
    lines += ["", *[f"- {n}" for n in notes], ""]
    if not only:
        lines += targets(run, ceiling_rps)
        for section in run.sections:
            lines += section
    return "\n".join(lines)
