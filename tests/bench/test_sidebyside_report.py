"""The side-by-side section with three servers (the platform, the in-memory peer, the
durable peer): the order of the servers changes from round to round, the cost of a request
adds the server's CPU to its stores', the cost ratio is peer / platform, and the ceiling
of a deployment follows from the PostgreSQL CPU per request. Figures made up; no timing."""

from __future__ import annotations

from bench.sidebyside import SCENARIOS, Result, Side, order
from bench.sidebyside_report import ceiling, report


def _side(name: str) -> Side:
    async def nothing(_: int) -> list[str]:
        return []

    return Side(name, "", "", "", "", "", "", nothing, nothing, "", lambda: 0.0, dict)


def _run(rps: float, cpu: float, db: float = 0.0, redis: float = 0.0) -> dict[str, float]:
    return {"rps": rps, "failures": 0.0, "cpu_us": cpu, "db_us": db, "redis_us": redis, "p99": 10.0}


def _result() -> Result:
    runs = {}
    for scenario in SCENARIOS:
        runs[scenario, "platform"] = [_run(800, 1000, 500, 10), _run(900, 1100, 400, 10), _run(1000, 900, 450, 20)]
        runs[scenario, "peer"] = [_run(1000, 900), _run(1100, 950), _run(1000, 1000)]
        runs[scenario, "peer-redis"] = [_run(900, 1200, 0, 100), _run(850, 1300, 0, 120), _run(950, 1250, 0, 110)]
    rss = {"platform": (120.0, 130.0), "peer": (80.0, 500.0), "peer-redis": (80.0, 150.0)}
    return Result(runs, rss, 256, 5, 3, 32, ("platform", "peer", "peer-redis"))


def test_each_server_takes_each_place_over_the_rounds() -> None:
    sides = tuple(_side(name) for name in ("a", "b", "c"))
    orders = [[s.name for s in order(sides, n)] for n in range(6)]
    assert all(sorted(o) == ["a", "b", "c"] for o in orders)
    for name in "abc":
        assert {o.index(name) for o in orders} == {0, 1, 2}
    two = tuple(_side(name) for name in ("a", "b"))
    assert [[s.name for s in order(two, n)] for n in range(2)] == [["a", "b"], ["b", "a"]]


def test_the_cost_of_a_request_is_the_server_and_its_stores_and_the_ratio_is_peer_over_platform() -> None:
    result = _result()
    assert result.cost("refresh", "platform") == 1510  # medians of 1510, 1510, 1370
    assert result.cost("refresh", "peer-redis") == 1360  # 1300, 1420, 1360
    lines = report(result, "granian", {"peer": "in memory", "peer-redis": "on Redis"})
    row = next(line for line in lines if line.startswith("| refresh grant") and "1510" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # platform: server, PostgreSQL, Redis, total; peer: server, ratio; peer-redis: server, Redis, total, ratio
    assert cells[1:5] == ["1000", "450", "10", "1510"]
    assert cells[5:7] == ["950", f"{950 / 1510:.2f}"]
    assert cells[7:11] == ["1250", "110", "1360", f"{1360 / 1510:.2f}"]


def test_the_ceiling_follows_from_the_postgresql_cpu_per_request() -> None:
    lines = ceiling(_result())
    row = next(line for line in lines if line.startswith("| refresh grant"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "450"  # µs of PostgreSQL per refresh, median of rounds
    assert cells[2] == f"{1e6 / 450:,.0f}"  # refreshes per second per PostgreSQL core
    header = next(line for line in lines if line.startswith("| path"))
    assert header.count("|") == row.count("|") == lines[lines.index(header) + 1].count("|")
