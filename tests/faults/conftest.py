"""On a failing test, the tail of every process's log of the topology it used."""

from __future__ import annotations

import pytest

from ..split import attach_log_tails


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    attach_log_tails(item, report)
    return report
