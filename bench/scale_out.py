"""The scale-out section of a run: the refresh grant on one worker and on two, neither
pinned, alternated round by round; what the machine's cores could give at all, and the
check that a second worker costs no more CPU per request."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.harness import CORES, median_of, start, stop
from bench.machine import busy_seconds
from bench.results import Run
from bench.sidebyside import Side, measured, total_us
from bench.sides import platform_side
from bench.stack import platform_env, redis_url, server_command
from tests.support.net import free_port


async def scale_out(run: Run, dsn: str, server: str, tmp: Path, seconds: int, rounds: int) -> list[str]:
    """The refresh grant on one worker and on two, neither pinned (both cores; wrk,
    PostgreSQL and Redis share them), alternated round by round."""
    sides: list[Side] = []
    processes = []
    try:
        for workers in (1, 2):
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            env = platform_env(dsn, redis_url(), port, "jwt", tmp / f"scale-{workers}")
            process = start(
                server_command(server, port, workers=workers),
                env,
                f"{base}/readyz",
                tmp / f"scale-{workers}.log",
                core=None,
            )
            processes.append(process)
            side = await platform_side(process, base, dsn, "")
            side.name = f"{workers} worker" + ("s" if workers > 1 else "")
            sides.append(side)
        lineages = 256
        runs, busy = await _alternate(sides, tmp, seconds, rounds, lineages)
    finally:
        for process in processes:
            stop(process)
    return _scale_lines(run, sides, runs, busy, lineages, seconds, rounds)


async def _alternate(
    sides: list[Side], tmp: Path, seconds: int, rounds: int, lineages: int
) -> tuple[dict[str, list[dict[str, float]]], dict[str, list[tuple[float, float]]]]:
    """The rounds, each side's refresh tokens minted first: each side's counted runs, and
    the whole machine's CPU seconds per request and share of its cores busy in each."""
    for side in sides:
        for n in range(rounds + 1):
            path = tmp / f"scale-{side.name.replace(' ', '-')}-{n}.txt"
            path.write_text("\n".join(await side.mint_refresh(lineages)) + "\n")
            side.files["refresh", str(n)] = path
    runs: dict[str, list[dict[str, float]]] = {s.name: [] for s in sides}
    # The whole machine's CPU seconds per request, and the share of its cores busy, by side.
    busy: dict[str, list[tuple[float, float]]] = {s.name: [] for s in sides}
    for n in range(rounds + 1):  # round 0 warms up and is not counted
        for side in sides if n % 2 == 0 else sides[::-1]:
            before, started = busy_seconds(), time.monotonic()
            result = measured(
                side,
                f"{side.base}{side.token_path}",
                seconds,
                script="refresh.lua",
                core=None,
                env={"TOKENS_FILE": str(side.files["refresh", str(n)]), "CLIENT_ID": side.client_id},
            )
            if n:
                runs[side.name].append(result)
                spent = busy_seconds() - before
                busy[side.name].append(
                    (spent / max(result["requests"], 1), spent / (CORES * (time.monotonic() - started)))
                )
            print(f"scale-out round {n}: {side.name}: {result['rps']:.0f} req/s", flush=True)
    return runs, busy


def _scale_lines(
    run: Run,
    sides: list[Side],
    runs: dict[str, list[dict[str, float]]],
    busy: dict[str, list[tuple[float, float]]],
    lineages: int,
    seconds: int,
    rounds: int,
) -> list[str]:
    """The section's table and what follows from it; the target's check added to the run."""
    one, two = (median_of(runs[s.name]) for s in sides)
    valid = one["failures"] == 0 and two["failures"] == 0
    ratio = two["rps"] / one["rps"]
    # What the cores could give at all: the machine's busy CPU per request (the server,
    # PostgreSQL, Redis, wrk and the kernel's share), all cores spent on that; and how
    # busy they were.
    (cost_one, busy_one), (cost_two, busy_two) = (
        (statistics.median(c for c, _ in busy[s.name]), statistics.median(b for _, b in busy[s.name])) for s in sides
    )
    run.checks.append(
        (
            "two workers: the machine's CPU per refresh within 5% of one worker's (two / one)",
            cost_two / cost_one,
            cost_two <= cost_one * 1.05 and valid,
            "{:.3f}",
        )
    )
    own_one, own_two = (statistics.median(total_us(r) for r in runs[s.name]) for s in sides)
    return [
        "## Scale-out on the token path",
        "",
        f"The refresh grant (public client, {lineages} lineages, each token once) on granian with one worker and "
        f"with two, neither pinned: the servers, wrk -t1 -c32, PostgreSQL and Redis share both cores. {rounds} "
        f"rounds of {seconds} s after a warm-up round, the two alternated; medians of rounds.",
        "",
        "| workers | req/s | p99 ms | rounds min-max | valid |",
        "|---|---:|---:|---|---|",
        *[
            f"| {s.name} | {r['rps']:.0f} | {r['p99']:.1f} | {min(x['rps'] for x in runs[s.name]):.0f}-"
            f"{max(x['rps'] for x in runs[s.name]):.0f} | {'yes' if r['failures'] == 0 else 'no'} |"
            for s, r in zip(sides, (one, two), strict=True)
        ],
        "",
        f"- Two workers / one worker: {ratio:.2f}x.",
        f"- The whole machine's busy CPU per request (the server, PostgreSQL, Redis, wrk, the kernel), medians of "
        f"rounds: {cost_one * 1e6:.0f} µs with one worker, {cost_two * 1e6:.0f} µs with two. With all {CORES} "
        f"cores spent on that alone, the machine could serve {CORES / cost_one:.0f} or {CORES / cost_two:.0f} "
        f"req/s: {CORES / cost_one / one['rps']:.2f}x or {CORES / cost_two / one['rps']:.2f}x one worker. "
        f"The cores were {busy_one:.0%} busy with one worker, {busy_two:.0%} with two.",
        f"- Two workers / one, the machine's CPU per request: {cost_two / cost_one:.3f} (the target: within 5%, "
        "1.05 at most).",
        f"- The same cost counted from /proc for the server and its stores alone (granian and its workers, the "
        f"PostgreSQL backends of the bench database, Redis; wrk and the kernel's share left out), medians of "
        f"rounds: {own_one:.0f} µs per refresh with one worker, {own_two:.0f} µs with two "
        f"({own_two / own_one:.3f}).",
        "",
    ]
