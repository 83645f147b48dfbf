"""The bench's probe of the machine's own speed: it runs, and a change beyond its noise
is named as such, so that two figures taken at different speeds are not compared."""

from __future__ import annotations

import math

from bench.harness import drift, speed_probe


def test_the_probe_times_its_fixed_work() -> None:
    first, second = speed_probe(), speed_probe()
    assert math.isfinite(first) and first > 0
    # the same work on the same machine a moment later: the same order of time
    assert 0.5 < second / first < 2


def test_a_drift_within_five_percent_is_steady_and_beyond_it_is_named() -> None:
    assert drift(100.0, 104.0) == "steady, +4%"
    assert drift(100.0, 97.0) == "steady, -3%"
    assert drift(100.0, 130.0).startswith("slower by 30%")
    assert drift(100.0, 80.0).startswith("faster by 20%")
    assert "do not compare" in drift(100.0, 80.0)
