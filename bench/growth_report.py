"""How the growth section tells its figures: the largest size against none from the
alternated rounds, the targets' rows it adds, and the chart of CPU per request against
the extra rows (bench/growth.svg)."""

from __future__ import annotations

from typing import Any

from bench.sidebyside import Result

_SCENARIOS = ("refresh", "introspection")


def _verdict(run: Any, result: Result, large: int, own: int) -> list[str]:
    """The largest size against none, from alternated rounds; the targets' rows."""
    grown, small = result.sides
    lines = [
        f"### {large:,} extra rows against none, side by side",
        "",
        f"Two servers alternated round by round as in the side-by-side section ({result.rounds} rounds of "
        f"{result.seconds} s after a warm-up, the order flipped every round, both pinned to the server's core, "
        f"one measured at a time): one on the bench database with the {large:,} extra rows, one on a copy of the "
        f"database taken before the first insert (CREATE DATABASE ... TEMPLATE: the {own:,} grants the bench had "
        "made, and those its rounds mint). A change of the machine's speed falls on both. Medians of rounds; "
        "ratio = large tables / small tables.",
        "",
        "| scenario | large tables req/s | small tables req/s | ratio | median of the rounds' ratios | rounds "
        "min-max, large | rounds min-max, small | CPU µs per request, large / small (server + PostgreSQL) | valid |",
        "|---|---:|---:|---:|---:|---|---|---:|---|",
    ]
    for scenario in _SCENARIOS:
        a, b = result.median(scenario, grown), result.median(scenario, small)
        ratio = a["rps"] / b["rps"]
        valid = result.valid(scenario)
        spread = {side: [r["rps"] for r in result.runs[scenario, side]] for side in result.sides}
        lines.append(
            f"| {scenario} | {a['rps']:.0f} | {b['rps']:.0f} | {ratio:.2f} | {result.per_round(scenario):.2f} | "
            f"{min(spread[grown]):.0f}-{max(spread[grown]):.0f} | {min(spread[small]):.0f}-{max(spread[small]):.0f} "
            f"| {a['cpu_us'] + a['db_us']:.0f} / {b['cpu_us'] + b['db_us']:.0f} | {'yes' if valid else 'no'} |"
        )
        run.checks.append(
            (
                f"{scenario} with {large:,} grants and refresh tokens within 10% of small tables (alternated rounds)",
                ratio,
                ratio >= 0.9 and valid,
                "{:.2f}",
            )
        )
    return lines


def plot(cost: dict[int, dict[str, float]]) -> str:
    """A small line chart (SVG) of CPU µs per request against the extra rows, one line per scenario."""
    width, height, left, right, top, bottom = 520, 260, 60, 130, 24, 40
    levels = sorted(cost)
    top_value = max(v for f in cost.values() for v in f.values()) * 1.15
    xs = {lv: left + (width - left - right) * (i / max(1, len(levels) - 1)) for i, lv in enumerate(levels)}

    def y(value: float) -> float:
        return top + (height - top - bottom) * (1 - value / top_value)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{y(0)}" x2="{width - right}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0)}" stroke="black"/>',
        f'<text x="{left - 45}" y="{top - 6}">CPU µs per request (server + PostgreSQL)</text>',
        f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">extra grants and refresh '
        "tokens (steps, not to scale)</text>",
    ]
    tick = next(t * 10**e for e in range(7) for t in (1, 2, 5) if top_value / (t * 10**e) <= 6)
    for step in range(int(top_value // tick) + 1):
        value = step * tick
        parts.append(f'<line x1="{left - 3}" y1="{y(value):.1f}" x2="{left}" y2="{y(value):.1f}" stroke="black"/>')
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.0f}</text>')
    for lv, x in xs.items():
        label = f"{lv / 1e6:g}M" if lv >= 10**6 else f"{lv / 1e3:g}k" if lv >= 1000 else str(lv)
        parts.append(f'<text x="{x:.1f}" y="{y(0) + 16:.1f}" text-anchor="middle">{label}</text>')
    for n, (scenario, colour) in enumerate((("refresh", "#c0392b"), ("introspection", "#2471a3"))):
        points = " ".join(f"{xs[lv]:.1f},{y(cost[lv][scenario]):.1f}" for lv in levels)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [
            f'<circle cx="{xs[lv]:.1f}" cy="{y(cost[lv][scenario]):.1f}" r="3" fill="{colour}"/>' for lv in levels
        ]
        parts.append(f'<text x="{width - right + 10}" y="{top + 20 + 16 * n}" fill="{colour}">{scenario}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
