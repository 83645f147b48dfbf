"""The one clock. Time is injected: code that decides by the time asks a `Clock`;
production passes `SystemClock`, tests freeze one."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> int:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> int:
        return int(time.time())


class FrozenClock:
    def __init__(self, at: int) -> None:
        self.at = at

    def now(self) -> int:
        return self.at

    def advance(self, seconds: int) -> None:
        self.at += seconds


def iso(seconds: int | None) -> str | None:
    """A time in seconds since the epoch as ISO 8601 in UTC (what every interface shows)."""
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat()
