"""What one run gathers (the main table's rows, notes, sections and targets' checks), the
speed issue's targets checked against it, and RESULTS.md written with the hand-written
analysis after its mark kept."""

from __future__ import annotations

from pathlib import Path

from bench.sidebyside import TOKEN_PATHS, Result

# A target's row: what it asks, the measured value, whether it is met, the value's format.
Check = tuple[str, float, bool, str]
TOKEN_READ_UNCACHED = "resource read, bearer token (JWT mode, activity recorded), catalogue cache off"


class Run:
    """What one `make bench` gathers: the main table's rows, notes, and extra sections."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, float]]] = []
        self.notes: list[str] = []
        self.sections: list[list[str]] = []
        self.checks: list[Check] = []
        self.side_by_side: Result | None = None


def targets(run: Run, ceiling_rps: float) -> list[str]:
    """The speed issue's targets, checked against this run's figures (ratios in one run;
    the peer's from the side-by-side section, medians of rounds)."""
    rps = {label: r["rps"] for label, r in run.rows}

    def find(prefix: str) -> float:
        return next(v for k, v in rps.items() if k.startswith(prefix))

    checks = [] if run.side_by_side is None else _peer_checks(run.side_by_side)
    anon = find("resource read, anonymous (same query)") / ceiling_rps
    checks.append(("resource list read, anonymous, at 0.35 of the ceiling or more", anon, anon >= 0.35, "{:.2f}"))
    cost = 1 - find(TOKEN_READ_UNCACHED) / find("resource read, anonymous, catalogue cache off (same query)")
    checks.append(
        (
            "token check with activity recording at most 10% of an uncached anonymous read (JWT mode)",
            cost,
            cost <= 0.10,
            "{:.1%}",
        )
    )
    out = ["## Against the targets of the speed issue", "", "| target | measured | met |", "|---|---:|---|"]
    out += [f"| {name} | {fmt.format(value)} | {'yes' if met else 'no'} |" for name, value, met, fmt in checks]
    out += [f"| {name} | {fmt.format(value)} | {'yes' if met else 'no'} |" for name, value, met, fmt in run.checks]
    return [*out, ""]


def _peer_checks(result: Result) -> list[Check]:
    """The targets against the peers: the token paths' CPU per request and throughput
    against the durable peer, the documents' throughput and RSS against each peer."""
    names = {
        "refresh": "refresh with rotation",
        "code": "authorization-code exchange",
        "introspection": "introspection",
    }
    durable = "peer-redis" if ("refresh", "peer-redis") in result.runs else "peer"
    checks: list[Check] = []
    for scenario in TOKEN_PATHS:
        cost = result.cost(scenario, durable) / result.cost(scenario, "platform")
        checks.append(
            (
                f"{names[scenario]}: CPU per request (server and stores), {durable} / platform, 1.0 or more",
                cost,
                cost >= 1.0 and result.valid(scenario),
                "{:.2f}",
            )
        )
    for scenario in TOKEN_PATHS:
        ratio = result.median(scenario, "platform")["rps"] / result.median(scenario, durable)["rps"]
        checks.append(
            (
                f"stretch: {names[scenario]} throughput at 1.0x {durable} or more",
                ratio,
                ratio >= 1.0 and result.valid(scenario),
                "{:.2f}x",
            )
        )
    for scenario, name in (("discovery", "discovery document"), ("jwks", "JWKS")):
        for peer in result.sides[1:]:
            ratio = result.median(scenario, "platform")["rps"] / result.median(scenario, peer)["rps"]
            met = ratio >= 1.5 and result.valid(scenario)
            checks.append((f"{name} at 1.5x {peer} or more", ratio, met, "{:.2f}x"))
    for peer in result.sides[1:]:
        (_, ours), (_, theirs) = result.rss["platform"], result.rss[peer]
        checks.append(
            (f"RSS after load no larger than {peer}'s (platform / {peer})", ours / theirs, ours <= theirs, "{:.2f}")
        )
    return checks


# Text after this line in RESULTS.md is written by hand (the analysis of the figures)
# and kept when `make bench` rewrites the figures above it.
ANALYSIS_MARK = "<!-- analysis: written by hand, kept by bench/run.py -->"


def write_report(path: Path, report: str) -> None:
    kept = ""
    if path.exists() and ANALYSIS_MARK in path.read_text():
        kept = path.read_text().split(ANALYSIS_MARK, 1)[1]
    path.write_text(f"{report.rstrip()}\n\n{ANALYSIS_MARK}{kept or chr(10)}")
