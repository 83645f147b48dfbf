"""The platform and the peer (bench/peer.py) on the same scenarios, the same wrk settings
and the same pinning (server on core 0, wrk on core 1), alternated: in each round every
scenario runs on one server then the other, and the order flips from round to round.
Figures are medians of rounds (a single round swings by tens of percent here); the ratio
is platform / peer, so above 1 means the platform is faster.

Single-use inputs are minted ahead of the rounds, each server through its own storage
(our grant store, the peer's models): refresh tokens for K independent lineages per
round (bench/lua/refresh.lua: each token used once, each answer checked to carry a new
one), authorization codes for the exchange (bench/lua/once.lua: each code once, sized
from a warm-up round so that none runs out), and one active access token per server
for introspection by its confidential client (bench/lua/introspect.lua)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import median_of, wrk


@dataclass
class Side:
    """One server as the scenarios see it."""

    name: str
    base: str
    discovery_path: str
    jwks_path: str
    token_path: str
    introspection_path: str
    client_id: str  # the public client of the flows, form-encoded
    mint_codes: Callable[[int], Awaitable[list[str]]]  # token-endpoint form bodies
    mint_refresh: Callable[[int], Awaitable[list[str]]]  # refresh tokens, each its own grant
    introspection_body: str  # token, client_id, client_secret, form-encoded
    rss: Callable[[], float]
    cpu: Callable[[], float]  # CPU seconds used so far by the server's processes
    db_cpu: Callable[[], float] = lambda: 0.0  # ...and by its PostgreSQL backends
    idle_rss: float = 0.0
    files: dict[tuple[str, str], Path] = field(default_factory=dict)


SCENARIOS = {
    "discovery": "discovery document (/.well-known/oauth-authorization-server)",
    "jwks": "JWKS",
    "refresh": "refresh grant with rotation ({lineages} lineages, each token used once)",
    "introspection": "introspection, active access token, confidential client",
    "code": "authorization-code exchange (each code used once)",
}


def _load(side: Side, scenario: str, tag: str) -> tuple[str, str | None, dict[str, str]]:
    """URL, Lua script and its environment for one run of `scenario` on `side`."""
    base = side.base
    if scenario == "discovery":
        return f"{base}{side.discovery_path}", None, {}
    if scenario == "jwks":
        return f"{base}{side.jwks_path}", None, {}
    if scenario == "introspection":
        return f"{base}{side.introspection_path}", "introspect.lua", {"BODY_FILE": str(side.files["introspection", ""])}
    if scenario == "refresh":
        return (
            f"{base}{side.token_path}",
            "refresh.lua",
            {"TOKENS_FILE": str(side.files["refresh", tag]), "CLIENT_ID": side.client_id},
        )
    return f"{base}{side.token_path}", "once.lua", {"BODIES_FILE": str(side.files["code", tag])}


async def _prepare(side: Side, tmp: Path, tags: list[str], lineages: int, codes: int) -> None:
    """Each round's single-use inputs (`codes` 0: none for the exchange)."""
    for tag in tags:
        refresh = tmp / f"{side.name}-refresh-{tag}.txt"
        refresh.write_text("\n".join(await side.mint_refresh(lineages)) + "\n")
        side.files["refresh", tag] = refresh
        if codes:
            bodies = tmp / f"{side.name}-codes-{tag}.txt"
            bodies.write_text("\n".join(await side.mint_codes(codes)) + "\n")
            side.files["code", tag] = bodies
    if ("introspection", "") not in side.files:
        body = tmp / f"{side.name}-introspection.txt"
        body.write_text(side.introspection_body + "\n")
        side.files["introspection", ""] = body


@dataclass
class Result:
    runs: dict[tuple[str, str], list[dict[str, float]]]  # (scenario, side) -> one per round
    rss: dict[str, tuple[float, float]]  # side -> (idle, after load) MiB
    lineages: int
    seconds: int
    rounds: int
    connections: int
    sides: tuple[str, str] = ("platform", "peer")

    def median(self, scenario: str, side: str) -> dict[str, float]:
        return median_of(self.runs[scenario, side])

    def per_round(self, scenario: str) -> float:
        """The median of the rounds' own ratios (each round's first side over its second)."""
        first, second = (self.runs[scenario, side] for side in self.sides)
        return statistics.median(a["rps"] / b["rps"] for a, b in zip(first, second, strict=True))

    def valid(self, scenario: str) -> bool:
        return all(r["failures"] == 0 for (sc, _), runs in self.runs.items() if sc == scenario for r in runs)


async def side_by_side(
    platform: Side,
    peer: Side,
    tmp: Path,
    *,
    seconds: int,
    rounds: int,
    lineages: int = 256,
    connections: int = 32,
    warmup: int = 2,
    scenarios: tuple[str, ...] = tuple(SCENARIOS),
    log: Callable[[str], None] = print,
) -> Result:
    """`platform` and `peer` are the two sides by role; any two servers of these
    scenarios compare the same way (the growth section: the platform on large tables and
    on small ones)."""
    sides = (platform, peer)
    exchange = "code" in scenarios
    for side in sides:
        side.idle_rss = side.rss()
    # Warm-up (not counted): every scenario once on each server, JIT and caches warm,
    # and the exchange rate that sizes each round's supply of codes.
    warm_rate: dict[str, float] = {}
    for side in sides:
        await _prepare(side, tmp, ["warm"], lineages, warmup * 4000 if exchange else 0)
        for scenario in scenarios:
            url, script, env = _load(side, scenario, "warm")
            result = wrk(url, warmup, script=script, env=env, connections=connections)
            if scenario == "code":
                warm_rate[side.name] = result["rps"]
    tags = [str(n) for n in range(rounds)]
    for side in sides:
        per_round = math.ceil(warm_rate[side.name] * seconds * 2.5) + 1000 if exchange else 0
        log(f"minting for {side.name}: {rounds} x ({lineages} refresh lineages, {per_round} codes)")
        await _prepare(side, tmp, tags, lineages, per_round)
    runs: dict[tuple[str, str], list[dict[str, float]]] = {(sc, s.name): [] for sc in scenarios for s in sides}
    for n, tag in enumerate(tags):
        order = sides if n % 2 == 0 else sides[::-1]
        for scenario in scenarios:
            for side in order:
                url, script, env = _load(side, scenario, tag)
                result = measured(side, url, seconds, script=script, env=env, connections=connections)
                runs[scenario, side.name].append(result)
                log(
                    f"round {n + 1}/{rounds} {scenario} {side.name}: {result['rps']:.0f} req/s"
                    + (f" ({result['failures']:.0f} failures)" if result["failures"] else "")
                )
    rss = {s.name: (s.idle_rss, s.rss()) for s in sides}
    return Result(runs, rss, lineages, seconds, rounds, connections, (platform.name, peer.name))


def measured(side: Side, url: str, seconds: int, **kw: Any) -> dict[str, float]:
    """One wrk run, with the CPU time the server (and, for ours, its PostgreSQL backends)
    spent per request served: steadier than throughput when other work shares the cores."""
    cpu, db = side.cpu(), side.db_cpu()
    result = wrk(url, seconds, **kw)
    served = max(1.0, result["requests"])
    result["cpu_us"] = (side.cpu() - cpu) / served * 1e6
    result["db_us"] = (side.db_cpu() - db) / served * 1e6
    return result


def report(result: Result, platform_label: str, peer_label: str) -> list[str]:
    lines = [
        "## Side by side with a peer server",
        "",
        f"The platform as above and, in the same run, {peer_label} (bench/peer/server.mjs, configured like a "
        "deployment of ours: PKCE S256 required, resource indicators with JWT access tokens (ES256) for the API "
        "and opaque ones for the resource server that introspects, refresh tokens rotated on every use, RS256 ID "
        "tokens, a public client for the flows, a confidential client (client_secret_post) for introspection). "
        f"Each server pinned to core 0, wrk -t1 -c{result.connections} on core 1, {result.seconds} s per run; "
        f"{result.rounds} rounds after a warm-up round, the two servers alternated within each round and the "
        "order flipped every round. Figures are medians of rounds; ratio = platform / peer (above 1: the "
        f"platform is faster). Platform: {platform_label}.",
        "",
        "| scenario | platform req/s | peer req/s | platform / peer | platform rounds min-max | peer rounds "
        "min-max | platform p99 ms | peer p99 ms | valid |",
        "|---|---:|---:|---:|---|---|---:|---:|---|",
    ]
    cpu_lines = [
        "CPU time per request served (medians of rounds): the server's own processes, and for the platform also "
        "its PostgreSQL backends (the peer keeps everything in its process). Less disturbed than throughput by "
        "other work on the machine; Redis (one call per platform request on the token paths) is left out. "
        "peer / platform above 1: the platform costs less CPU per request.",
        "",
        "| scenario | platform server µs | platform + PostgreSQL µs | peer µs | peer / platform (server) | "
        "peer / platform (with PostgreSQL) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for scenario, label in SCENARIOS.items():
        ours, theirs = result.median(scenario, "platform"), result.median(scenario, "peer")
        spread = {side: [r["rps"] for r in result.runs[scenario, side]] for side in ("platform", "peer")}
        valid = (
            "yes" if result.valid(scenario) else (f"no ({ours['failures'] + theirs['failures']:.0f} failed requests)")
        )
        label = label.format(lineages=result.lineages)
        lines.append(
            f"| {label} | {ours['rps']:.0f} | {theirs['rps']:.0f} | "
            f"{ours['rps'] / theirs['rps']:.2f} | {min(spread['platform']):.0f}-{max(spread['platform']):.0f} | "
            f"{min(spread['peer']):.0f}-{max(spread['peer']):.0f} | {ours['p99']:.1f} | {theirs['p99']:.1f} | "
            f"{valid} |"
        )
        with_db = ours["cpu_us"] + ours["db_us"]
        cpu_lines.append(
            f"| {label} | {ours['cpu_us']:.0f} | {with_db:.0f} | {theirs['cpu_us']:.0f} | "
            f"{theirs['cpu_us'] / ours['cpu_us']:.2f} | {theirs['cpu_us'] / with_db:.2f} |"
        )
    lines += ["", *cpu_lines]
    per_round = {sc: result.per_round(sc) for sc in SCENARIOS}
    (p_idle, p_load), (q_idle, q_load) = result.rss["platform"], result.rss["peer"]
    lines += [
        "",
        "- Median of the per-round ratios (each round's platform figure over the peer's in the same round): "
        + ", ".join(f"{sc} {v:.2f}" for sc, v in per_round.items())
        + ".",
        f"- RSS: platform {p_idle:.0f} MiB idle, {p_load:.0f} MiB after the rounds (granian's process and its "
        f"worker; the data is in PostgreSQL); peer {q_idle:.0f} MiB idle, {q_load:.0f} MiB after the rounds "
        "(one Node process, every grant, code and token it minted or issued held in its memory).",
        "",
    ]
    return lines
