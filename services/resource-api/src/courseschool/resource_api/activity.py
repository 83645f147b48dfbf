"""What each grant did at this API: its reads counted per area and day, its changes one
by one (issue 25; the summary: storage/activity.py, `/internal/activity`).

Changes are recorded by the statement that makes them (storage/items.py, files.py): a change
is never without its record, Redis or not.

Reads are on the hot path, so counting one costs a dictionary update in the process
(`ReadCounter.count`), nothing more. Every ACTIVITY_FLUSH_INTERVAL seconds the
`ActivityJob` of each replica:

1. flushes its counts to one Redis hash (`ReadBuffer.flush`: one script call per 500
   keys, adding counts and keeping the latest time), where every replica's meet;
2. drains that hash into PostgreSQL (`ReadBuffer.drain`): one replica at a time (a lock
   in Redis), the hash renamed first so that new counts go to a fresh one, then at most
   ACTIVITY_FLUSH_BATCH rows per statement and 10 statements per pass, each batch removed
   from Redis once written (a replica that dies between the two writes a batch twice
   when the next one drains: at least once, never lost once in Redis);
3. at most every HOUSEKEEPING_INTERVAL, removes activity older than
   ACTIVITY_RETENTION_DAYS by the application's clock (bounded batches, storage/activity.py).

What may be lost, and only reads: the counts of one interval of a replica when Redis
does not take them at its flush (they are dropped, logged as `activity_reads_dropped`
and counted in `courseschool_activity_reads_total{result="dropped"}`), the counts of a
replica that dies before its flush, and the reads of new keys past
`MAX_PENDING_KEYS` distinct grant/area/day keys in one interval (dropped the same way).
Reads show in the summary once flushed and drained: within about two intervals.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.background import STOP_GRACE, BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import get_logger
from courseschool.common.metrics import ACTIVITY_READS
from courseschool.common.secrets import new_token

from .auth.verifier import Principal
from .storage.activity import PgActivityStore, ReadCount

log = get_logger(__name__)

LIVE = "rs:activity:reads"  # field: the key as JSON; value: "count last-seconds"
DRAINING = "rs:activity:reads:draining"
DRAIN_LOCK = "rs:activity:drain-lock"
MAX_PENDING_KEYS = 50_000  # distinct grant/area/day keys one replica holds between flushes
FLUSH_CHUNK = 500  # keys per script call
DRAIN_ROUNDS = 10  # statements per drain pass
REDIS_DOWN = (redis.exceptions.RedisError, OSError)

Key = tuple[str, str, str, str, str, int]  # grant, client, user, school, area, day

# Adds counts to the hash's fields and keeps the later of two times ("count seconds"). The
# hash expires a day after its last flush: counts no replica drained for a day are lost.
_ADD = """
for i = 1, #ARGV, 3 do
  local field, n, last = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local held = redis.call('HGET', KEYS[1], field)
  if held then
    local c, l = string.match(held, '^(%d+) (%d+)$')
    if c then
      n = n + tonumber(c)
      if tonumber(l) > last then last = tonumber(l) end
    end
  end
  redis.call('HSET', KEYS[1], field, string.format('%d %d', n, last))
end
redis.call('EXPIRE', KEYS[1], 86400)
return #ARGV / 3
"""
# Releases the drain lock only if this replica still holds it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class ReadCounter:
    """Reads per grant, area and day since the last flush, in this process."""

    def __init__(self, clock: Clock, max_keys: int = MAX_PENDING_KEYS) -> None:
        self.clock = clock
        self._max_keys = max_keys
        self._counts: dict[Key, list[int]] = {}  # key -> [count, last seconds]
        self.overflow = 0  # reads not counted since the last flush: too many keys

    def count(self, principal: Principal, area: str) -> None:
        """One read by `principal` in `area` (a token that names no grant is not counted)."""
        if principal.grant_id is None or principal.school_id is None:
            return
        now = self.clock.now()
        key = (
            principal.grant_id,
            principal.client_id or "",
            principal.sub or "",
            principal.school_id,
            area,
            now // 86400,
        )
        held = self._counts.get(key)
        if held is not None:
            held[0] += 1
            held[1] = now
        elif len(self._counts) < self._max_keys:
            self._counts[key] = [1, now]
        else:
            self.overflow += 1

    def take(self) -> tuple[dict[Key, list[int]], int]:
        """The counts since the last call and the reads not counted, both reset."""
        counts, overflow = self._counts, self.overflow
        self._counts, self.overflow = {}, 0
        return counts, overflow


class ReadBuffer:
    """The counts of every replica in Redis, on their way to PostgreSQL."""

    def __init__(self, redis: aioredis.Redis, store: PgActivityStore, *, batch: int, lock_ttl: int = 120) -> None:
        self._redis = redis
        self._store = store
        self._batch = batch
        self._lock_ttl = lock_ttl
        self._add = redis.register_script(_ADD)
        self._release = redis.register_script(_RELEASE)

    async def flush(self, counter: ReadCounter) -> int:
        """Move the process's counts to Redis: the reads moved. When Redis does not take
        them, they are dropped (logged and counted), and so are the reads past the key bound."""
        counts, overflow = counter.take()
        total = sum(c for c, _ in counts.values())
        if overflow:
            _dropped(overflow, reason="too_many_keys")
        if not counts:
            return 0
        items = list(counts.items())
        flushed = 0
        try:
            for start in range(0, len(items), FLUSH_CHUNK):
                chunk = items[start : start + FLUSH_CHUNK]
                args: list[Any] = []
                for key, (n, last) in chunk:
                    args += [msgspec.json.encode(key), n, last]
                await self._add(keys=[LIVE], args=args)
                flushed += sum(n for _, (n, _) in chunk)
        except REDIS_DOWN as exc:
            # Chunks already taken stay in Redis; the interval's others are lost (stated).
            _dropped(total - flushed, reason=type(exc).__name__)
        ACTIVITY_READS.labels("flushed").inc(flushed)
        return flushed

    async def drain(self) -> int:
        """Write the counts held in Redis to PostgreSQL, bounded: rows written. Nothing
        when another replica drains now."""
        token = new_token(16)
        if not await self._redis.set(DRAIN_LOCK, token, nx=True, ex=self._lock_ttl):
            return 0
        try:
            if not await self._redis.exists(DRAINING):
                try:
                    await self._redis.rename(LIVE, DRAINING)
                except redis.exceptions.ResponseError:  # no such key: nothing was counted
                    return 0
            return await self._drain_rounds()
        finally:
            await self._release(keys=[DRAIN_LOCK], args=[token])

    async def _drain_rounds(self) -> int:
        written, cursor = 0, 0
        for _ in range(DRAIN_ROUNDS):
            cursor, page = await self._redis.hscan(DRAINING, cursor, count=self._batch)
            held: dict[bytes, bytes] = page  # type: ignore[assignment]  # a hash's fields and values
            for fields in _chunks(list(held.items()), self._batch):
                counts = _parsed(fields)
                if counts:
                    await self._store.add_reads(counts)
                await self._redis.hdel(DRAINING, *(field for field, _ in fields))
                written += len(counts)
            if cursor == 0:
                break
        return written


def _parsed(fields: list[tuple[bytes, bytes]]) -> list[ReadCount]:
    """The hash's fields as rows, one per grant, day and area (malformed ones skipped)."""
    rows: dict[tuple[str, int, str], ReadCount] = {}
    for field, value in fields:
        try:
            grant, client, user, school, area, day = msgspec.json.decode(field, type=Key)
            n, last = (int(part) for part in value.split())
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
            log.warning("activity_count_malformed")
            continue
        if not (_is_uuid(grant) and _is_uuid(school)):
            continue
        held = rows.get((grant, day, area))
        if held is not None:  # the same grant under another client or user: cannot be, but add up
            n, last = n + held.reads, max(last, held.last_at)
        rows[grant, day, area] = ReadCount(grant, client, user, school, area, day, n, last)
    return list(rows.values())


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _chunks(items: list[tuple[bytes, bytes]], size: int) -> Iterator[list[tuple[bytes, bytes]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _dropped(reads: int, *, reason: str) -> None:
    ACTIVITY_READS.labels("dropped").inc(reads)
    log.warning("activity_reads_dropped", reads=reads, reason=reason)


class ActivityJob(BackgroundLoop):
    """Each replica's background work for the activity (module docstring)."""

    name = "activity"

    def __init__(
        self,
        counter: ReadCounter,
        buffer: ReadBuffer,
        store: PgActivityStore,
        *,
        interval: float,
        retention_days: int,
        housekeeping_interval: float,
        batch: int,
    ) -> None:
        self.counter = counter
        self.buffer = buffer
        self.store = store
        self._interval = interval
        self._retention_days = retention_days
        self._housekeeping_interval = housekeeping_interval
        self._batch = batch
        super().__init__()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        """Stop, flushing what this process counted (so that a restart loses no interval)."""
        stopped = await super().stop(grace)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(grace):
                await self.buffer.flush(self.counter)
        return stopped

    async def run_once(self) -> dict[str, int]:
        """One flush and one drain: reads flushed, rows written."""
        flushed = await self.buffer.flush(self.counter)
        return {"flushed": flushed, "written": await self.buffer.drain()}

    async def housekeeping(self) -> dict[str, int]:
        """Retention, by the clock the reads are counted by (the counter's, the app's)."""
        done = await self.store.sweep(self._retention_days, now=self.counter.clock.now(), batch=self._batch)
        if any(done.values()):
            log.info("housekeeping_done", **done)
        return done

    async def _run(self) -> None:
        next_sweep = time.monotonic() + self._housekeeping_interval
        while not self.stopping:
            await asyncio.sleep(self._interval)
            await _step("flush", lambda: self.buffer.flush(self.counter))
            await _step("drain", self.buffer.drain)
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + self._housekeeping_interval
                await _step("housekeeping", self.housekeeping)


async def _step(name: str, run: Callable[[], Awaitable[object]]) -> None:
    try:
        await run()
    except Exception as exc:  # noqa: BLE001 - counts in Redis wait for the next pass; sweeps run again
        log.warning("activity_job_failed", step=name, error=type(exc).__name__)
