"""The benchmark suite (`make bench`): wrk on loopback against the platform started with
its production server settings on real PostgreSQL and Redis, every figure also given
as a ratio to the framework ceiling measured in the same run. Bounded in time.

In the same run: the peer server (oidc-provider, bench/peer.py) on its in-memory adapter
and on our Redis adapter (the durable peer) on the same scenarios, alternated round by
round, with platform/peer ratios of throughput and of CPU per request of each server and
its stores (bench/sidebyside.py); the refresh grant on one worker against two; a
deployment's ceiling from the measured PostgreSQL CPU per request; the connected-apps
page, and its activity query alone (bench/activity.py), with a million rows of others'
activity against small tables; optionally
(--growth) refresh and introspection as the tables grow to a million grants and refresh
tokens (bench/growth.py).

Usage: python -m bench.run [--seconds 5] [--repeats 3] [--rounds 5] [--growth]; writes
bench/RESULTS.md. `--activity` runs only the token check with activity recording against
an anonymous read, and the apps page and its activity query, and prints them. Needs wrk (Debian),
Node.js and npm (the peer; `npm ci` in bench/ on first use), a PostgreSQL
(BENCH_DATABASE_URL, default: the machine's on 127.0.0.1) and a Redis: BENCH_REDIS_URL,
or by default a redis-server of the bench's own, started for the run (bench/harness.py:
RedisServer), so that its CPU time is the bench's alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.activity import activity_section
from bench.apps_page import activity_report, apps_page_section
from bench.growth import growing_tables
from bench.harness import CORES, MachineLoad, RedisServer, median_of, rss_mb, start, stop, wrk
from bench.inputs import _claims, flow_latency, owner_tokens
from bench.results import TOKEN_READ_UNCACHED, Run, targets, write_report
from bench.scale_out import scale_out
from bench.sides import compare_with_peer, platform_side
from bench.stack import EMAIL, PASSWORD, PG, RS_SECRET, platform_env, redis_url, scratch_database, server_command
from bench.topology import split_services
from tests.support.net import free_port

ROOT = Path(__file__).resolve().parent.parent


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
    rows, notes = run.rows, run.notes

    def record(name: str, runs: list[dict[str, float]]) -> dict[str, float]:
        result = median_of(runs)
        rows.append((name, result))
        print(f"{name}: {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms", flush=True)
        return result

    def measure(name: str, url: str, *, env: dict[str, str] | None = None, **kw: object) -> dict[str, float]:
        """`{n}` in an env value becomes the repeat's number: single-use bodies are never reused."""
        runs = [
            wrk(url, seconds, env={k: v.replace("{n}", str(n)) for k, v in (env or {}).items()}, **kw)  # type: ignore[arg-type]
            for n in range(repeats)
        ]
        return record(name, runs)

    def reads(token: str, courses: str, names: tuple[str, str]) -> tuple[dict[str, float], dict[str, float]]:
        """The same page of courses read anonymously (by the school's id) and with a token,
        the two alternated repeat by repeat (the order flipped each time), so that a change
        of the machine's speed during the pair falls on both and the token's cost is read
        from their difference."""
        school = _claims(token)["school_id"]
        pair = [
            (names[0], f"{courses}&published=true&school={school}", ""),
            (names[1], f"{courses}&published=true", token),
        ]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in pair}
        for n in range(repeats):
            for name, url, bearer in pair if n % 2 == 0 else pair[::-1]:
                runs[name].append(wrk(url, seconds, script="bearer.lua", env={"ACCESS_TOKEN": bearer}))
        anon, authed = (record(name, runs[name]) for name, _, _ in pair)
        return anon, authed

    if only != "activity":
        port = free_port()
        ceiling = start(
            server_command(server, port, "bench.ceiling:app"),
            {**os.environ, "PYTHONPATH": str(ROOT)},
            f"http://127.0.0.1:{port}/ceiling",
            tmp / "ceiling.log",
        )
        try:
            measure("framework ceiling (bare endpoint)", f"http://127.0.0.1:{port}/ceiling")
        finally:
            stop(ceiling)

    from courseschool.platform.run import prepare

    async with scratch_database("bench") as dsn:
        await prepare(dsn, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
        modes = {"": ("jwt", "uncached", "introspection"), "compare": ("jwt",), "activity": ("uncached",)}[only]
        for mode in modes:
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
                    measure(
                        "discovery: /.well-known/oauth-authorization-server",
                        f"{base}/.well-known/oauth-authorization-server",
                    )
                    measure(
                        "resource read, bearer token (JWT mode)",
                        f"{courses}&published=true",
                        script="bearer.lua",
                        env=token_env,
                    )
                elif mode == "jwt":
                    measure(
                        "discovery: /.well-known/oauth-authorization-server",
                        f"{base}/.well-known/oauth-authorization-server",
                    )
                    measure("JWKS", f"{base}/api/oauth/jwks")
                    reads(
                        tokens["access_token"],
                        courses,
                        ("resource read, anonymous (same query)", "resource read, bearer token (JWT mode)"),
                    )
                    ours = await platform_side(process, base, dsn, tokens["access_token"])
                    await compare_with_peer(run, ours, tmp, seconds, rounds)
                    latency = await flow_latency(base, 5)
                    notes.append(
                        f"Full interactive flow (register, authorize, sign in, consent, token, first API "
                        f"call), median of 5: {latency * 1000:.0f} ms."
                    )
                else:  # uncached (JWT) and introspection: the token check's cost against the same read
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
                    anon, authed = reads(tokens["access_token"], courses, names)
                    notes.append(
                        f"Token check cost in {label} mode, the grant's activity recorded (the read counted, "
                        f"flushed to Redis and drained to PostgreSQL every ACTIVITY_FLUSH_INTERVAL): "
                        f"{100 * (1 - authed['rps'] / anon['rps']):.1f}% of an anonymous read's throughput, both "
                        "uncached (CATALOGUE_CACHE_TTL=0), alternated in the same server."
                    )
                loaded = rss_mb(process)
                notes.append(
                    f"RSS of the all-in-one process ({mode} mode): {idle:.0f} MiB idle, {loaded:.0f} MiB after load."
                )
            finally:
                stop(process)
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


def layers() -> str:
    """python -m bench.layers in a process of its own (it wraps the database drivers to count)."""
    done = subprocess.run([sys.executable, "-m", "bench.layers"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"bench.layers failed:\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS.md"))
    parser.add_argument(
        "--server", choices=["uvicorn", "granian"], default="granian", help="granian is what `serve` runs in production"
    )
    parser.add_argument("--compare", action="store_true", help="only the scenarios that compare servers")
    parser.add_argument(
        "--rounds", type=int, default=5, help="rounds of the side-by-side and scale-out sections (medians of rounds)"
    )
    parser.add_argument(
        "--growth",
        action="store_true",
        help="also the refresh grant and introspection with a million rows in the tables (slow)",
    )
    parser.add_argument("--growth-levels", default="0,100000,1000000", help="extra rows at each step of --growth")
    parser.add_argument("--no-scale-out", action="store_true", help="skip one worker against two")
    parser.add_argument(
        "--activity",
        action="store_true",
        help="only the token check with activity recording against an anonymous read, and the apps-page query "
        "as the tables grow (printed, RESULTS.md left alone)",
    )
    parser.add_argument(
        "--activity-rows", type=int, default=1_000_000, help="rows of others' activity in each table (apps page)"
    )
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    levels = [int(n) for n in args.growth_levels.split(",")] if args.growth else None
    own_redis = own_redis_server()
    try:
        text = measure_all(args, levels)
    finally:
        if own_redis:
            own_redis.stop()
    if text is not None:  # --activity prints its figures and leaves RESULTS.md alone
        write_report(Path(args.out), text)
        print(text)


def own_redis_server() -> RedisServer | None:
    """Unless BENCH_REDIS_URL names one, a Redis server of the bench's own for the whole run
    (its URL also handed to the bench's subprocesses through BENCH_REDIS_URL)."""
    if "BENCH_REDIS_URL" in os.environ or not shutil.which("redis-server"):
        return None
    server = RedisServer(Path(tempfile.mkdtemp(prefix="cs-bench-redis-")) / "redis.log")
    os.environ["BENCH_REDIS_URL"] = server.url
    return server


def measure_all(args: argparse.Namespace, levels: list[int] | None) -> str | None:
    machine = MachineLoad()
    machine.start()
    text = asyncio.run(
        bench(
            args.seconds,
            args.repeats,
            args.server,
            "compare" if args.compare else "activity" if args.activity else "",
            rounds=args.rounds,
            growth_levels=levels,
            scale=not args.no_scale_out,
            activity_rows=args.activity_rows,
        )
    )
    if args.activity:
        machine.stop()
        print(text)
        return None
    if not args.compare:
        if not args.growth:
            text += (
                "\n## As the tables grow\n\nNot measured in this run (`make bench BENCH_ARGS=--growth` "
                "adds it: a million rows take a few minutes to insert).\n"
            )
        text += "\n" + "\n".join(asyncio.run(split_services(args.seconds)))
        text += "\n## Where the time goes\n\n" + layers()
    machine.stop()
    head, table = text.split("\n\n| scenario | req/s", 1)
    return f"{head}\n\n{machine.note()}\n\n| scenario | req/s{table}"


if __name__ == "__main__":
    main()
