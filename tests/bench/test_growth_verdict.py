"""The growth section's verdict: the largest size against none, read from alternated
rounds of two servers. Within 10% of the small tables with every request valid meets the
target; a slower large side or a failed request does not."""

from __future__ import annotations

from typing import Any

from bench.growth_report import _verdict
from bench.sidebyside import Result


class _Run:
    def __init__(self) -> None:
        self.checks: list[tuple[str, float, bool, str]] = []


def _rounds(*rps: float, failures: float = 0) -> list[dict[str, float]]:
    return [{"rps": r, "failures": failures, "cpu_us": 400.0, "db_us": 100.0, "p99": 10.0} for r in rps]


def _result(large: dict[str, Any], small: dict[str, Any]) -> Result:
    runs = {}
    for scenario in ("refresh", "introspection"):
        runs[scenario, "large"] = large[scenario]
        runs[scenario, "small"] = small[scenario]
    return Result(runs, {}, lineages=256, seconds=5, rounds=3, connections=32, sides=("large", "small"))


def test_the_ratio_of_medians_decides_and_each_scenario_has_its_target_row() -> None:
    result = _result(
        {"refresh": _rounds(950, 990, 1000), "introspection": _rounds(2000, 2100, 2200)},
        {"refresh": _rounds(1000, 1000, 1100), "introspection": _rounds(2500, 2600, 2700)},
    )
    run = _Run()
    lines = _verdict(run, result, 1_000_000, 50_000)
    (refresh, r_ratio, r_met, _), (introspection, i_ratio, i_met, _) = run.checks
    assert "refresh with 1,000,000" in refresh and "alternated rounds" in refresh
    assert r_ratio == 990 / 1000 and r_met
    assert "introspection" in introspection
    assert i_ratio == 2100 / 2600 and not i_met  # 0.81: more than 10% slower
    assert any(line.startswith("| refresh | 990 | 1000 | 0.99 |") for line in lines)


def test_the_median_of_the_rounds_own_ratios_pairs_each_round() -> None:
    result = _result(
        {"refresh": _rounds(100, 300, 200), "introspection": _rounds(1, 1, 1)},
        {"refresh": _rounds(200, 300, 100), "introspection": _rounds(1, 1, 1)},
    )
    assert result.per_round("refresh") == 1.0  # 0.5, 1.0, 2.0
    assert result.per_round("introspection") == 1.0


def test_a_failed_request_fails_the_target_whatever_the_ratio() -> None:
    result = _result(
        {"refresh": _rounds(1000, 1000, 1000, failures=1), "introspection": _rounds(2000, 2000, 2000)},
        {"refresh": _rounds(1000, 1000, 1000), "introspection": _rounds(2000, 2000, 2000)},
    )
    run = _Run()
    lines = _verdict(run, result, 1_000_000, 50_000)
    assert [met for _, _, met, _ in run.checks] == [False, True]
    assert any(line.startswith("| refresh |") and line.endswith("| no |") for line in lines)
