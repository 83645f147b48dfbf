"""The bench's probe of the machine's own speed: it runs, and a change beyond its noise
is named as such, so that two figures taken at different speeds are not compared."""

from __future__ import annotations

import math

from bench.machine import drift, speed_probe


def test_the_probe_times_its_fixed_work() -> None:
    # a figure, not a timing assertion: the subprocess runs its work and prints its time
    probe = speed_probe(tries=1)
    assert math.isfinite(probe) and probe > 0


def test_a_drift_within_five_percent_is_steady_and_beyond_it_is_named() -> None:
    assert drift(100.0, 104.0) == "steady, +4%"
    assert drift(100.0, 97.0) == "steady, -3%"
    assert drift(100.0, 130.0).startswith("slower by 30%")
    assert drift(100.0, 80.0).startswith("faster by 20%")
    assert "do not compare" in drift(100.0, 80.0)
