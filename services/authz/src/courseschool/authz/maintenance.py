"""What every replica does in the background: reload (and, when due, rotate) the
signing keys each KEY_RELOAD_INTERVAL, a housekeeping pass each HOUSEKEEPING_INTERVAL
(storage/housekeeping.py: bounded batches, replicas skip each other's rows), and about
hourly remove dynamically registered clients that never completed a grant."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from courseschool.common.background import BackgroundLoop
from courseschool.common.logging import get_logger

from .endpoints.registration import remove_unused_clients

if TYPE_CHECKING:
    from .components import Components  # the root that starts this loop

log = get_logger(__name__)


class Maintenance(BackgroundLoop):
    """The module docstring's three tasks, each at its own interval, in one loop."""

    name = "maintenance"

    def __init__(self, c: Components) -> None:
        super().__init__()
        self._c = c

    async def _run(self) -> None:
        c, settings = self._c, self._c.settings
        every = {  # task -> (seconds between runs, what it runs)
            "keys": (settings.key_reload_interval, c.keys.maintain),
            "housekeeping": (settings.housekeeping_interval, lambda: housekeeping(c)),
            "unused_clients": (3600, lambda: remove_unused_clients(c.administration)),
        }
        due = {name: time.monotonic() + seconds for name, (seconds, _) in every.items()}
        while not self.stopping:
            # Until the keys are loaded (Postgres was down at start), try every second.
            wait = min(due.values()) - time.monotonic() if c.keys.loaded else 1
            await asyncio.sleep(max(0.0, wait))
            now = time.monotonic()
            for name, (seconds, run) in every.items():
                if self.stopping:
                    break
                if now < due[name] and (name != "keys" or c.keys.loaded):
                    continue
                due[name] = now + seconds
                try:
                    await run()
                except Exception as exc:  # noqa: BLE001 - keep the last good keys; try again next round
                    log.warning("maintenance_failed", task=name, error=type(exc).__name__)


async def housekeeping(c: Components) -> dict[str, int]:
    """One housekeeping pass; what it removed, logged when anything was. Requests for a
    school's approval past their time are marked expired first (and their people told)."""
    expired = await c.account.access_requests.expire(now=c.clock.now())
    done = {"access_requests_expired": expired, **await c.housekeeping.sweep()}
    if any(done.values()):
        log.info("housekeeping_done", **done)
    return done
