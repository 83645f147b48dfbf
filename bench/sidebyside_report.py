"""The side-by-side section's tables: the platform against the peers on each scenario
(throughput, and the CPU a request costs the server and its stores), and from the
PostgreSQL CPU per request of the token paths, a deployment's ceiling."""

from __future__ import annotations

from bench.sidebyside import SCENARIOS, TOKEN_PATHS, Result


def _label(result: Result, scenario: str) -> str:
    return SCENARIOS[scenario].format(lineages=result.lineages)


def report(result: Result, platform_label: str, peer_labels: dict[str, str]) -> list[str]:
    """The side-by-side section: `peer_labels` names each peer side ({side name: what it
    is}); the first side of the result is the platform."""
    platform, *peers = result.sides
    return [
        "## Side by side with peer servers",
        "",
        "The platform as above and, in the same run, "
        + "; ".join(f"**{name}**: {label}" for name, label in peer_labels.items())
        + ". The peer is bench/peer/server.mjs, configured like a deployment of ours: PKCE S256 required, resource "
        "indicators with JWT access tokens (ES256) for the API and opaque ones for the resource server that "
        "introspects, refresh tokens rotated on every use, RS256 ID tokens, a public client for the flows, a "
        "confidential client (client_secret_post) for introspection. "
        f"Each server pinned to core 0, wrk -t1 -c{result.connections} on core 1, {result.seconds} s per run; "
        f"{result.rounds} rounds after a warm-up round, the servers alternated within each round, the order "
        "rotated by one from round to round. Figures are medians of rounds; ratio = platform / peer (above "
        f"1: the platform is faster). Platform: {platform_label}.",
        "",
        *_throughput_table(result),
        "",
        "CPU time per request served, the server and its stores (medians of rounds, µs), from /proc before and "
        "after each run: the server's processes (granian's and its worker's; Node's), the PostgreSQL backends "
        "connected to the platform's database, the Redis server each side uses (the bench's own, used by "
        "nothing else). PostgreSQL's shared processes (WAL writer, checkpointer) are not counted. Cost ratio = "
        "peer / platform: at 1 or more the platform costs no more CPU per request than that peer.",
        "",
        *_cost_table(result),
        "",
        "- Median of the per-round ratios (each round's platform figure over the peer's in the same round): "
        + "; ".join(
            f"{p}: " + ", ".join(f"{sc} {result.per_round(sc, platform, p):.2f}" for sc in SCENARIOS) for p in peers
        )
        + ".",
        "- RSS (MiB, idle / after the rounds): "
        + ", ".join(f"{s} {result.rss[s][0]:.0f} / {result.rss[s][1]:.0f}" for s in result.sides)
        + ". The platform's is granian's process and its worker (its data is in PostgreSQL); each peer's is its "
        "Node process (the in-memory peer holds every grant, code and token it minted or issued; the durable "
        "peer's are in Redis).",
        "",
    ]


def _throughput_table(result: Result) -> list[str]:
    """Requests per second of each server on each scenario, medians and spread of rounds."""
    platform, *peers = result.sides
    lines = [
        "| scenario | platform req/s | "
        + " | ".join(f"{p} req/s | platform / {p}" for p in peers)
        + " | platform rounds min-max | "
        + " | ".join(f"{p} rounds min-max" for p in peers)
        + " | valid |",
        "|---|---:|" + "---:|---:|" * len(peers) + "---|" * (1 + len(peers)) + "---|",
    ]
    for scenario in SCENARIOS:
        if (scenario, platform) not in result.runs:
            continue
        ours = result.median(scenario, platform)
        spread = {side: [r["rps"] for r in result.runs[scenario, side]] for side in result.sides}
        failed = sum(r["failures"] for (sc, _), runs in result.runs.items() if sc == scenario for r in runs)
        lines.append(
            f"| {_label(result, scenario)} | {ours['rps']:.0f} | "
            + " | ".join(
                f"{result.median(scenario, p)['rps']:.0f} | {ours['rps'] / result.median(scenario, p)['rps']:.2f}"
                for p in peers
            )
            + " | "
            + " | ".join(f"{min(spread[s]):.0f}-{max(spread[s]):.0f}" for s in result.sides)
            + f" | {'yes' if result.valid(scenario) else f'no ({failed:.0f} failed requests)'} |"
        )
    return lines


def _cost_table(result: Result) -> list[str]:
    """CPU µs per request of each server and its stores on each scenario, and peer / platform."""
    platform, *peers = result.sides
    lines = [
        "| scenario | platform: server | PostgreSQL | Redis | total | "
        + " | ".join(
            f"{p}: server | Redis | total | cost ratio" if _uses_redis(result, p) else f"{p}: server | cost ratio"
            for p in peers
        )
        + " |",
        "|---|" + "---:|" * 4 + "".join("---:|" * (4 if _uses_redis(result, p) else 2) for p in peers),
    ]
    for scenario in SCENARIOS:
        if (scenario, platform) not in result.runs:
            continue
        ours = result.median(scenario, platform)
        cells = [
            f"{ours['cpu_us']:.0f}",
            f"{ours['db_us']:.0f}",
            f"{ours['redis_us']:.0f}",
            f"{result.cost(scenario, platform):.0f}",
        ]
        for p in peers:
            theirs = result.median(scenario, p)
            ratio = f"{result.cost(scenario, p) / result.cost(scenario, platform):.2f}"
            if _uses_redis(result, p):
                cells += [f"{theirs['cpu_us']:.0f}", f"{theirs['redis_us']:.0f}", f"{result.cost(scenario, p):.0f}"]
            else:
                cells.append(f"{theirs['cpu_us']:.0f}")
            cells.append(ratio)
        lines.append(f"| {_label(result, scenario)} | " + " | ".join(cells) + " |")
    return lines


def _uses_redis(result: Result, side: str) -> bool:
    return any(r["redis_us"] > 0 for (_, s), runs in result.runs.items() if s == side for r in runs)


# A primary's size for the ceiling's arithmetic, and the share of its cores the token path
# may use (the rest: autovacuum, checkpoints, WAL, the other paths, headroom for a peak).
PRIMARY_CORES = (4, 16, 64)
PRIMARY_BUSY = 0.6
ACCESS_TOKEN_SECONDS = 600  # a client refreshes about once per access token's lifetime


def ceiling(result: Result) -> list[str]:
    """A deployment's ceiling on each token path, from the CPU per request this run measured
    for PostgreSQL (the one piece that does not scale out by adding workers), Redis and the
    server's worker."""
    lines = [
        "## A deployment's ceiling on the token paths",
        "",
        "From the side-by-side rounds above (medians of rounds): the CPU each request cost the PostgreSQL backends, "
        "Redis and the server's worker, turned into requests per second that one core of each can carry when it "
        "does nothing else. Workers scale out by processes and pods; Redis is one thread per server; the "
        f"PostgreSQL primary is where every write lands. A primary is counted at {PRIMARY_BUSY:.0%} of its cores "
        "for these requests (the rest: autovacuum, checkpoints, the WAL, the other paths, a peak).",
        "",
        "| path | PostgreSQL µs per request | req/s per PostgreSQL core | "
        + " | ".join(f"one {c}-core primary, req/s" for c in PRIMARY_CORES)
        + " | Redis µs | req/s per Redis server | worker µs | req/s per worker core |",
        "|---|" + "---:|" * (6 + len(PRIMARY_CORES)),
    ]
    for scenario in TOKEN_PATHS:
        ours = result.median(scenario, "platform")
        pg, redis, worker = ours["db_us"], ours["redis_us"], ours["cpu_us"]
        per_core = 1e6 / pg if pg else float("inf")
        lines.append(
            f"| {SCENARIOS[scenario].format(lineages=result.lineages)} | {pg:.0f} | {per_core:,.0f} | "
            + " | ".join(f"{per_core * c * PRIMARY_BUSY:,.0f}" for c in PRIMARY_CORES)
            + f" | {redis:.0f} | {f'{1e6 / redis:,.0f}' if redis else '-'} | {worker:.0f} | {1e6 / worker:,.0f} |"
        )
    refresh = result.median("refresh", "platform")["db_us"]
    lines += [
        "",
        f"- Refreshes are the steady load: a client refreshes about once per access token's lifetime "
        f"({ACCESS_TOKEN_SECONDS // 60} minutes), so each refresh a second the primary carries keeps "
        f"{ACCESS_TOKEN_SECONDS} active sessions alive: one {PRIMARY_CORES[1]}-core primary about "
        f"{1e6 / refresh * PRIMARY_CORES[1] * PRIMARY_BUSY * ACCESS_TOKEN_SECONDS:,.0f} sessions "
        "(refreshes alone; see the analysis for shards and replicas past it).",
        "",
    ]
    return lines
