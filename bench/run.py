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

This module is the command line and the report file; bench/suite.py runs the sections in
their order, each from a module of its own (bench/sides.py, scale_out.py, growth.py,
apps_page.py, topology.py), and bench/stack.py holds the platform's settings.
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

from bench.harness import RedisServer
from bench.machine import MachineLoad
from bench.results import write_report
from bench.suite import bench
from bench.topology import split_services

ROOT = Path(__file__).resolve().parent.parent


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
