"""Rows kept in this process's memory for as long as Postgres says they are unchanged.

A writer's trigger announces each changed key with NOTIFY on a channel (delivered when
its transaction commits, whoever wrote: any replica, the admin CLI, a migration); the
cache listens on a connection of its own and drops the key it hears. Nothing is served
from memory while that connection is down: every lookup then goes to Postgres, the
connection is tried again after `retry` seconds, and the entries are dropped when it
comes back (changes may have been missed meanwhile). A connection that stays open but
goes quiet (a network partition) would deliver no notice and raise no error, so the
cache asks it `SELECT 1` every `ping_every` seconds and gives it up when no answer came
for `silence` seconds; memory is trusted only while it was heard from that recently.
A lookup that began before a notification arrived is not kept (its row may predate the
change). The process that writes drops its own copy at once (`forget`); the others when
the notice arrives, about a millisecond after the commit. `ttl` bounds an entry's age
whatever happens; absent keys are never kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import asyncpg

from .logging import get_logger

log = get_logger(__name__)
V = TypeVar("V")


class RowCache(Generic[V]):
    def __init__(
        self,
        dsn: str,
        channel: str,
        *,
        ttl: float = 10.0,
        retry: float = 5.0,
        max_entries: int = 10_000,
        ping_every: float = 1.0,
        silence: float = 3.0,
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._ttl = ttl
        self._retry = retry
        self._max = max_entries
        self._ping_every = ping_every
        self._silence = silence
        self._entries: dict[str, tuple[V, float]] = {}
        self._generation = 0  # moves on every notification and every (re)connection
        self._conn: asyncpg.Connection | None = None
        self._heard = -math.inf  # time.monotonic() of the listening connection's last answer
        self._watchdog: asyncio.Task[None] | None = None
        self._retry_at = 0.0
        self._closed = False

    async def get(self, key: str, load: Callable[[str], Awaitable[V | None]]) -> V | None:
        if not await self._listening():
            return await load(key)
        now = time.monotonic()
        entry = self._entries.get(key)
        if entry is not None and entry[1] > now:
            return entry[0]
        generation = self._generation
        value = await load(key)
        if value is not None and generation == self._generation and self._trusted():
            if len(self._entries) >= self._max:
                self._entries.clear()
            self._entries[key] = (value, now + self._ttl)
        return value

    def forget(self, key: str) -> None:
        """This process changed the row: drop it now, without waiting for the notice."""
        self._notified(None, 0, self._channel, key)

    async def close(self) -> None:
        self._closed = True
        conn, self._conn = self._conn, None
        self._entries.clear()
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        if conn is not None and not conn.is_closed():
            await conn.close(timeout=2)

    def _trusted(self) -> bool:
        conn = self._conn
        return conn is not None and not conn.is_closed() and time.monotonic() - self._heard < self._silence

    async def _listening(self) -> bool:
        if self._trusted():
            return True
        if self._conn is not None and not self._conn.is_closed():
            self._conn.terminate()  # open but silent: given up, `_lost` runs
        if self._closed or time.monotonic() < self._retry_at:
            return False
        self._retry_at = time.monotonic() + self._retry  # one attempt at a time, then a pause
        try:
            conn = await asyncpg.connect(self._dsn, timeout=2)
            await conn.add_listener(self._channel, self._notified)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
            log.warning("row_cache_unavailable", channel=self._channel, error=type(exc).__name__)
            return False
        conn.add_termination_listener(self._lost)
        self._entries.clear()
        self._generation += 1
        self._conn = conn
        self._heard = time.monotonic()
        self._watchdog = asyncio.create_task(self._watch(conn))
        return True

    async def _watch(self, conn: asyncpg.Connection) -> None:
        """Ask the listening connection something every `ping_every` seconds; give it up
        when an answer does not come within `silence` seconds (a partition closes nothing)."""
        while not conn.is_closed():
            await asyncio.sleep(self._ping_every)
            try:
                await conn.fetchval("SELECT 1", timeout=self._silence)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
                conn.terminate()  # `_lost` runs; the next lookup connects again
                return
            self._heard = time.monotonic()

    def _notified(self, _conn: Any, _pid: int, _channel: str, key: str) -> None:
        self._generation += 1
        if key:
            self._entries.pop(key, None)
        else:
            self._entries.clear()

    def _lost(self, conn: Any) -> None:
        self._generation += 1
        self._entries.clear()
        if conn is not self._conn:
            return  # asyncpg calls this soon after, not at, the end: a newer connection may be up
        self._conn = None
        if not self._closed:
            log.warning("row_cache_disconnected", channel=self._channel)
