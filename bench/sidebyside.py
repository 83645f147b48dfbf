"""The platform and the peers (bench/peer.py: oidc-provider on its shipped in-memory
adapter, and on our Redis adapter, the durable peer) on the same scenarios, the same wrk
settings and the same pinning (server on core 0, wrk on core 1), alternated: in each
round every scenario runs on each server in turn, and the order changes from round to
round (rotated by one, reversed every other full turn). Figures are medians of rounds (a
single round swings by tens of percent here); the ratio is platform / peer, so above 1
means the platform is faster.

Each run also takes the CPU time that the server and its stores spent per request
served, from /proc before and after the run (bench/cpu.py: cpu_spent): the server's
processes (granian and its worker; Node), the PostgreSQL backends of the platform's
database, and the Redis server each side uses. On two cores that figure, not
throughput, is the judge: other work on the machine slows a side's requests but hardly
changes the CPU each one costs.

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

from bench.cpu import Sample, cpu_spent
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
    cpu: Callable[[], Sample]  # CPU time of the server's processes so far
    db_cpu: Callable[[], Sample] = dict  # ...of its PostgreSQL backends
    redis_cpu: Callable[[], Sample] = dict  # ...of the Redis server it uses
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
    sides: tuple[str, ...] = ("platform", "peer")

    def median(self, scenario: str, side: str) -> dict[str, float]:
        return median_of(self.runs[scenario, side])

    def per_round(self, scenario: str, first: str = "", second: str = "") -> float:
        """The median of the rounds' own ratios (each round's `first` side over its `second`;
        by default the first two sides)."""
        a_runs, b_runs = (self.runs[scenario, side] for side in (first or self.sides[0], second or self.sides[1]))
        return statistics.median(a["rps"] / b["rps"] for a, b in zip(a_runs, b_runs, strict=True))

    def cost(self, scenario: str, side: str) -> float:
        """CPU µs per request of the server and its stores, median of rounds."""
        return statistics.median(total_us(r) for r in self.runs[scenario, side])

    def valid(self, scenario: str) -> bool:
        return all(r["failures"] == 0 for (sc, _), runs in self.runs.items() if sc == scenario for r in runs)


def total_us(run: dict[str, float]) -> float:
    """One run's CPU µs per request: the server, its PostgreSQL backends, its Redis."""
    return run["cpu_us"] + run["db_us"] + run["redis_us"]


def order(sides: tuple[Side, ...], n: int) -> tuple[Side, ...]:
    """The order of round `n`: rotated by n (two sides: flipped every round; three: each
    side first, middle and last over three rounds), reversed every other full turn (so
    that which side follows which changes too)."""
    k = n % len(sides)
    turned = sides[k:] + sides[:k]
    return turned[::-1] if (n // len(sides)) % 2 else turned


async def side_by_side(
    sides: tuple[Side, ...],
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
    """The first side is the one the ratios are of (the platform); any servers of these
    scenarios compare the same way (the growth section: the platform on large tables and
    on small ones)."""
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
        for scenario in scenarios:
            for side in order(sides, n):
                url, script, env = _load(side, scenario, tag)
                result = measured(side, url, seconds, script=script, env=env, connections=connections)
                runs[scenario, side.name].append(result)
                log(
                    f"round {n + 1}/{rounds} {scenario} {side.name}: {result['rps']:.0f} req/s"
                    + (f" ({result['failures']:.0f} failures)" if result["failures"] else "")
                )
    rss = {s.name: (s.idle_rss, s.rss()) for s in sides}
    return Result(runs, rss, lineages, seconds, rounds, connections, tuple(s.name for s in sides))


def measured(side: Side, url: str, seconds: int, **kw: Any) -> dict[str, float]:
    """One wrk run, with the CPU time the server, its PostgreSQL backends and its Redis
    spent per request served: steadier than throughput when other work shares the cores."""
    meters = {"cpu_us": side.cpu, "db_us": side.db_cpu, "redis_us": side.redis_cpu}
    before = {name: sample() for name, sample in meters.items()}
    result = wrk(url, seconds, **kw)
    after = {name: sample() for name, sample in meters.items()}
    served = max(1.0, result["requests"])
    for name in meters:
        result[name] = cpu_spent(before[name], after[name]) / served * 1e6
    return result


TOKEN_PATHS = ("refresh", "code", "introspection")
