"""What every replica does in the background: reload (and, when due, rotate) the
signing keys each KEY_RELOAD_INTERVAL, and about hourly remove dynamically
registered clients that never completed a grant."""

from __future__ import annotations

import asyncio

from courseschool.common.logging import audit, get_logger

from ..components import Components

log = get_logger(__name__)


async def maintenance_loop(c: Components) -> None:
    interval = c.settings.key_reload_interval
    rounds = 0
    while True:
        # Until the keys are loaded (Postgres was down at start), try every second.
        await asyncio.sleep(interval if c.keys.loaded else 1)
        rounds += 1
        try:
            await c.keys.maintain()
            if rounds * interval >= 3600:
                rounds = 0
                await remove_unused_clients(c)
        except Exception as exc:  # noqa: BLE001 - keep the last good keys; try again next round
            log.warning("maintenance_failed", error=type(exc).__name__)


async def remove_unused_clients(c: Components) -> list[str]:
    """Registration hygiene: dynamically registered clients, and metadata-document
    clients a user approved, that never completed a grant, older than
    UNUSED_CLIENT_TTL (a disabled document client stays: it keeps its URL blocked)."""
    cutoff = c.clock.now() - c.settings.unused_client_ttl
    removed = await c.admin_store.delete_unused_clients(older_than=cutoff)
    if removed:
        audit("unused_clients_removed", actor="system", count=len(removed))
    return removed
