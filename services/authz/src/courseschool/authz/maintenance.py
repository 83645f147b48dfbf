"""What every replica does in the background: reload (and, when due, rotate) the
signing keys each KEY_RELOAD_INTERVAL, a housekeeping pass each HOUSEKEEPING_INTERVAL
(storage/housekeeping.py: bounded batches, replicas skip each other's rows), and about
hourly remove dynamically registered clients that never completed a grant."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import get_logger

from .endpoints.registration import remove_unused_clients
from .families import AccountPages, Administration
from .keys import SigningKeys
from .storage.housekeeping import PgHousekeeping

log = get_logger(__name__)


class Maintenance(BackgroundLoop):
    """The module docstring's three tasks, each at its own interval, in one loop."""

    name = "maintenance"

    def __init__(
        self,
        keys: SigningKeys,
        housekeeping: Callable[[], Awaitable[object]],
        administration: Administration,
        *,
        key_reload_interval: float,
        housekeeping_interval: float,
    ) -> None:
        super().__init__()
        self._keys = keys
        self._every: dict[str, tuple[float, Callable[[], Awaitable[object]]]] = {
            # task -> (seconds between runs, what it runs)
            "keys": (key_reload_interval, keys.maintain),
            "housekeeping": (housekeeping_interval, housekeeping),
            "unused_clients": (3600, lambda: remove_unused_clients(administration)),
        }

    async def _run(self) -> None:
        keys, every = self._keys, self._every
        due = {name: time.monotonic() + seconds for name, (seconds, _) in every.items()}
        while not self.stopping:
            # Until the keys are loaded (Postgres was down at start), try every second.
            wait = min(due.values()) - time.monotonic() if keys.loaded else 1
            await asyncio.sleep(max(0.0, wait))
            now = time.monotonic()
            for name, (seconds, run) in every.items():
                if self.stopping:
                    break
                if now < due[name] and (name != "keys" or keys.loaded):
                    continue
                due[name] = now + seconds
                try:
                    await run()
                except Exception as exc:  # noqa: BLE001 - keep the last good keys; try again next round
                    log.warning("maintenance_failed", task=name, error=type(exc).__name__)


class Kept(Protocol):
    """What a housekeeping pass reads of the server's root (components.Components)."""

    @property
    def clock(self) -> Clock: ...
    @property
    def housekeeping(self) -> PgHousekeeping: ...
    @property
    def account_pages(self) -> AccountPages: ...


async def housekeeping(c: Kept) -> dict[str, int]:
    """One housekeeping pass; what it removed, logged when anything was. Requests for a
    school's approval past their time are marked expired first (and their people told)."""
    expired = await c.account_pages.access_requests.expire(now=c.clock.now())
    done = {"access_requests_expired": expired, **await c.housekeeping.sweep()}
    if any(done.values()):
        log.info("housekeeping_done", **done)
    return done
