"""What every replica does in the background: reload (and, when due, rotate) the
signing keys each KEY_RELOAD_INTERVAL, a housekeeping pass each HOUSEKEEPING_INTERVAL
(storage/housekeeping.py: bounded batches, replicas skip each other's rows), and about
hourly remove dynamically registered clients that never completed a grant."""

from __future__ import annotations

import asyncio
import time

from courseschool.common.logging import audit, get_logger

from ..components import Components

log = get_logger(__name__)


async def maintenance_loop(c: Components) -> None:
    interval = c.settings.key_reload_interval
    started = time.monotonic()
    due = {"housekeeping": started + c.settings.housekeeping_interval, "unused_clients": started + 3600}
    while True:
        # Until the keys are loaded (Postgres was down at start), try every second.
        await asyncio.sleep(min(interval, c.settings.housekeeping_interval) if c.keys.loaded else 1)
        try:
            await c.keys.maintain()
            now = time.monotonic()
            if now >= due["housekeeping"]:
                due["housekeeping"] = now + c.settings.housekeeping_interval
                await housekeeping(c)
            if now >= due["unused_clients"]:
                due["unused_clients"] = now + 3600
                await remove_unused_clients(c)
        except Exception as exc:  # noqa: BLE001 - keep the last good keys; try again next round
            log.warning("maintenance_failed", error=type(exc).__name__)


async def housekeeping(c: Components) -> dict[str, int]:
    """One housekeeping pass; what it removed, logged when anything was."""
    done = await c.housekeeping.sweep()
    if any(done.values()):
        log.info("housekeeping_done", **done)
    return done


async def remove_unused_clients(c: Components) -> list[str]:
    """Registration hygiene: dynamically registered clients, and metadata-document
    clients a user approved, that never completed a grant, older than
    UNUSED_CLIENT_TTL (a disabled document client stays: it keeps its URL blocked)."""
    cutoff = c.clock.now() - c.settings.unused_client_ttl
    removed = await c.admin_store.delete_unused_clients(older_than=cutoff)
    if removed:
        audit("unused_clients_removed", actor="system", count=len(removed))
    return removed
