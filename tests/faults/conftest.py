"""On a failing test, the tail of every process's log of the topology it used. Under
pytest-xdist every test here runs on one worker, one after another: each starts, stops,
pauses and crashes servers of its own and loads the machine while it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.split import attach_log_tails

FOLDER = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(FOLDER):
            item.add_marker(pytest.mark.xdist_group("faults"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    attach_log_tails(item, report)
    return report
