"""The refresh grant and introspection as the tables grow: live grants, each with a live
refresh token, and revoked access tokens (a tenth as many) bulk-inserted with
generate_series into the platform's own tables, then the same scenarios as the
side-by-side section (platform only) at each size. Cost per request is the CPU time the
server and its PostgreSQL backends spend per request served, drawn in bench/growth.svg;
the machine's own speed is probed before each size.

The sizes follow one another in time, so a machine whose speed drifts between them would
be read as the tables' doing. The verdict on the largest size therefore comes from a
comparison that a drift cannot skew: two servers alternated round by round, as in the
side-by-side section, one on the grown database and one on a copy of it taken before the
first insert. Optional (`make bench BENCH_ARGS=--growth`): a million rows take a while to
insert."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import asyncpg

from bench.growth_report import _SCENARIOS, _verdict, plot
from bench.growth_rows import blocks, grow
from bench.harness import ROOT, median_of, start, stop, wrk
from bench.inputs import owner_tokens
from bench.machine import drift, speed_probe
from bench.results import Run
from bench.sidebyside import Side, measured, side_by_side
from bench.sides import platform_side
from bench.stack import EMAIL, copy_of, platform_env, redis_url, server_command
from tests.support.net import free_port


async def growth_section(
    run: Any,
    ours: Side,
    small: Side,
    dsn: str,
    tmp: Path,
    seconds: int,
    levels: list[int],
    *,
    rounds: int = 5,
    steps: int = 3,
    lineages: int = 256,
    email: str,
) -> list[str]:
    """`ours` serves the database of `dsn`, which grows; `small` a copy of it without the
    inserted rows. `steps` rounds at each size one after the other, then `rounds`
    alternated rounds of the two at the largest size."""
    client_id = unquote(ours.client_id)
    conn = await asyncpg.connect(dsn)
    try:
        own = await conn.fetchval("SELECT count(*) FROM authz_grants")
    finally:
        await conn.close()
    figures: dict[int, dict[str, dict[str, float]]] = {}
    outside: dict[int, tuple[float, float]] = {}  # blocks read from outside shared_buffers: per request, share
    probes: dict[int, float] = {}  # the machine's speed right before each size's rounds
    present = 0
    await _warm_up(ours, tmp, lineages)
    for level in sorted(levels):
        if level > present:
            print(f"growth: inserting rows {present + 1}..{level}", flush=True)
            await grow(dsn, client_id, ours.base, email, present, level)
            present = level
        before = await blocks(dsn)  # after its pause, so that the insert's aftermath has settled
        probes[level] = speed_probe()
        runs = await _rounds_at(ours, tmp, level, steps, seconds, lineages)
        figures[level] = {k: median_of(v) for k, v in runs.items()}
        hit, read, buffers = await blocks(dsn)
        hit, read = hit - before[0], read - before[1]
        served = sum(r["requests"] for v in runs.values() for r in v)
        outside[level] = (read / served, read / max(1, hit + read))
        print(
            f"growth {level}: " + ", ".join(f"{k} {v['rps']:.0f} req/s" for k, v in figures[level].items()), flush=True
        )
    small_size, large = min(figures), max(figures)
    lines = _sizes_lines(figures, outside, probes, buffers, own=own, steps=steps, seconds=seconds)
    slower, moved = probes[large] / probes[small_size], drift(probes[small_size], probes[large])
    lines.append(
        f"- The machine's speed probe, {large:,} / {small_size:,}: {slower:.2f} ({moved})"
        ": the table's sizes were measured one after the other, so their figures compare only as far as the "
        "machine kept its speed. The verdict below does not depend on it."
    )
    print(f"growth: {large:,} extra rows against none, alternated", flush=True)
    verdict = await side_by_side(
        (ours, small), tmp, seconds=seconds, rounds=rounds, lineages=lineages, scenarios=_SCENARIOS, log=print
    )
    lines += ["", *_verdict(run, verdict, large, own)]
    return [*lines, ""]


async def _warm_up(ours: Side, tmp: Path, lineages: int) -> None:
    """A warm-up run of each scenario, not counted."""
    warm = tmp / "growth-warm.txt"
    warm.write_text("\n".join(await ours.mint_refresh(lineages)) + "\n")
    wrk(
        f"{ours.base}{ours.token_path}",
        2,
        script="refresh.lua",
        env={"TOKENS_FILE": str(warm), "CLIENT_ID": ours.client_id},
    )
    wrk(
        f"{ours.base}{ours.introspection_path}",
        2,
        script="introspect.lua",
        env={"BODY_FILE": str(ours.files["introspection", ""])},
    )


async def _rounds_at(
    ours: Side, tmp: Path, level: int, steps: int, seconds: int, lineages: int
) -> dict[str, list[dict[str, float]]]:
    """`steps` rounds of each scenario at one size, fresh refresh tokens for each."""
    runs: dict[str, list[dict[str, float]]] = {"refresh": [], "introspection": []}
    for n in range(steps):
        tokens = tmp / f"growth-{level}-{n}.txt"
        tokens.write_text("\n".join(await ours.mint_refresh(lineages)) + "\n")
        runs["refresh"].append(
            measured(
                ours,
                f"{ours.base}{ours.token_path}",
                seconds,
                script="refresh.lua",
                env={"TOKENS_FILE": str(tokens), "CLIENT_ID": ours.client_id},
            )
        )
        runs["introspection"].append(
            measured(
                ours,
                f"{ours.base}{ours.introspection_path}",
                seconds,
                script="introspect.lua",
                env={"BODY_FILE": str(ours.files["introspection", ""])},
            )
        )
    return runs


def _sizes_lines(
    figures: dict[int, dict[str, dict[str, float]]],
    outside: dict[int, tuple[float, float]],
    probes: dict[int, float],
    buffers: str,
    *,
    own: int,
    steps: int,
    seconds: int,
) -> list[str]:
    """The table of the sizes one after the other, and its chart written to bench/growth.svg."""
    lines = [
        "## As the tables grow",
        "",
        f"The refresh grant and introspection (as in the side-by-side section, platform only) with N live grants "
        f"and N live refresh tokens and N/10 revoked, unexpired access tokens bulk-inserted into the tables "
        "(generate_series, then VACUUM ANALYZE and a checkpoint, so that neither runs during the measurement), "
        f"on top of the {own:,} grants the bench itself had made. Medians of {steps} rounds of "
        f"{seconds} s at each size. Cost per request: the CPU time the server and its PostgreSQL backends "
        "spent per request served (steadier than throughput when other work shares the machine); the plot "
        "draws it. Speed probe: the machine's own speed right before each size's rounds "
        "(`machine.speed_probe`, µs for a fixed piece of CPU work on the server's core; lower is faster).",
        "",
        "| extra rows N | refresh req/s | refresh CPU µs per request | introspection req/s | introspection CPU "
        "µs per request | blocks from outside shared_buffers per request | speed probe µs | valid |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]

    def cost(f: dict[str, float]) -> float:
        return f["cpu_us"] + f["db_us"]

    for level, f in sorted(figures.items()):
        ok = all(v["failures"] == 0 for v in f.values())
        per_request, share = outside[level]
        lines.append(
            f"| {level:,} | {f['refresh']['rps']:.0f} | {cost(f['refresh']):.0f} | "
            f"{f['introspection']['rps']:.0f} | {cost(f['introspection']):.0f} | "
            f"{per_request:.2f} ({share:.1%} of blocks) | {probes[level]:.1f} | {'yes' if ok else 'no'} |"
        )
    svg = ROOT / "bench" / "growth.svg"
    svg.write_text(plot({k: {s: cost(v) for s, v in f.items()} for k, f in figures.items()}))
    lines += [
        "",
        f"Blocks: table and index blocks PostgreSQL read from outside its shared_buffers "
        f"({buffers}) during the rounds (the OS page cache or the disk), all tables of the "
        "bench database, per request served.",
        "",
        "![CPU time per request (server and PostgreSQL) as the tables grow](growth.svg)",
        "",
    ]
    return lines


async def growing_tables(
    run: Run, dsn: str, server: str, tmp: Path, seconds: int, levels: list[int], rounds: int
) -> list[str]:
    """bench/growth.py on a platform process of its own (pinned like the others), last:
    the rows it inserts stay in the bench database. A second process serves a copy of the
    database taken before the first insert, the small tables the largest size is
    compared with, round by round."""
    async with copy_of(dsn, "small") as small_dsn:
        sides: list[Side] = []
        processes: list[subprocess.Popen[bytes]] = []
        try:
            for name, database in (("large", dsn), ("small", small_dsn)):
                port = free_port()
                base = f"http://127.0.0.1:{port}"
                processes.append(
                    start(
                        server_command(server, port),
                        platform_env(database, redis_url(), port, "jwt", tmp / f"growth-{name}"),
                        f"{base}/readyz",
                        tmp / f"growth-{name}.log",
                    )
                )
                _, tokens = await owner_tokens(base, "openid courses:read")
                side = await platform_side(processes[-1], base, database, tokens["access_token"])
                side.name = name
                body = tmp / f"growth-{name}-introspection.txt"
                body.write_text(side.introspection_body + "\n")
                side.files["introspection", ""] = body
                sides.append(side)
            large, small = sides
            return await growth_section(run, large, small, dsn, tmp, seconds, levels, rounds=rounds, email=EMAIL)
        finally:
            for process in processes:
                stop(process)
