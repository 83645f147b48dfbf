"""`python -m courseschool.platform run` (what `make run` runs) says each step of its
start-up as it begins (embedded PostgreSQL, with initdb on the first start only,
embedded Redis, the migrations and the demo school), then, once /readyz answers, the
time to ready with what took it; counted from `make run` too when it says when it began
(RUN_STARTED_AT). Only what is printed is checked here, never how fast it is."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.serving import tail
from .test_stop_signals_stop_embedded_servers import _data_folder, _embedded, _platform, _stopped, _wait_ready

READY_LINE = re.compile(
    r"^  Ready in (?P<ready>\d+\.\d) s \(starting Python and the code \d+\.\d s, "
    r"embedded PostgreSQL \d+\.\d s, embedded Redis \d+\.\d s, migrations and the demo school \d+\.\d s, "
    r"the server and its apps \d+\.\d s\)(?:; (?P<make>\d+\.\d) s since `make run`)?$",
    re.M,
)
PRINTED_WITHIN = 15.0  # the line follows the first 200 from /readyz; a bound, not a wait


@pytest.fixture
def data_dir() -> Iterator[Path]:
    with _data_folder("cs-start-up-") as folder:
        yield folder


def _started(folder: Path, log_path: Path) -> str:
    """Start, wait until ready and its ready line is out, stop; the whole output."""
    with _platform(folder, log_path) as (process, base):
        _wait_ready(process, base, log_path)
        servers = _embedded(folder)
        deadline = time.monotonic() + PRINTED_WITHIN
        while not READY_LINE.search(tail(log_path)):
            assert time.monotonic() < deadline, f"no ready line:\n{tail(log_path)}"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _stopped(process, servers, log_path)
    return log_path.read_text(errors="replace")


def test_each_start_up_step_is_said_and_the_banner_ends_with_the_time_to_ready(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUN_STARTED_AT", str(time.time() - 30))  # `make run` began 30 s before this start
    first = _started(data_dir, tmp_path / "first.log")
    steps = [
        "  embedded PostgreSQL (first start: initdb) ...\n",
        "  embedded Redis ...\n",
        "  migrations and the demo school ...\n",
        "  Course School is running at ",
    ]
    at = [first.find(step) for step in steps]
    assert -1 not in at and at == sorted(at), f"steps missing or out of order:\n{first}"
    ready = READY_LINE.search(first)
    assert ready is not None and ready.start() > at[-1], first
    assert ready["make"] is not None, "RUN_STARTED_AT was given: the time since `make run` is said"
    assert float(ready["make"]) >= float(ready["ready"]) + 29, ready.group(0)  # counted from RUN_STARTED_AT

    # The second start finds the database made: no initdb to announce. A RUN_STARTED_AT that
    # is no time is ignored.
    monkeypatch.setenv("RUN_STARTED_AT", "not-a-time")
    second = _started(data_dir, tmp_path / "second.log")
    assert "  embedded PostgreSQL ...\n" in second and "initdb" not in second.split("Course School is running")[0]
    ready = READY_LINE.search(second)
    assert ready is not None and ready["make"] is None, second
