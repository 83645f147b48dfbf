"""Rate limits: fixed-window counters in Redis, shared by every replica.

When Redis cannot be reached the counters fall back to this process's memory, so no
limit becomes unlimited and no request fails because of the limiter itself (each
replica then enforces the limit on its own share of the traffic).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time

import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from .logging import get_logger

log = get_logger(__name__)
_RATE = re.compile(r"^(\d+)/(\d+)$")


class Rate(msgspec.Struct, frozen=True):
    limit: int
    window: int  # seconds


def parse_rate(value: str, name: str) -> Rate:
    """`"10/60"`: ten per sixty seconds."""
    match = _RATE.match(value.strip())
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise ValueError(f"{name.upper()} must look like LIMIT/SECONDS, e.g. 10/60")
    return Rate(int(match.group(1)), int(match.group(2)))


class Decision(msgspec.Struct, frozen=True):
    allowed: bool
    retry_after: int = 0


# Take up to ARGV[3i] events of each key's window, in order, setting the window's expiry
# on its first count; stop at the first key whose window has nothing left and return its
# position (0: none refused) followed by what each key before it was given. One atomic
# round trip whatever the number of keys. ARGV holds (limit, ttl, wanted) per key.
_TAKE = """
local given = {}
for i, key in ipairs(KEYS) do
  local limit, wanted = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i])
  local after = redis.call('INCRBY', key, wanted)
  if after == wanted then redis.call('EXPIRE', key, ARGV[3 * i - 1]) end
  local before = after - wanted
  if before >= limit then
    table.insert(given, 1, i)
    return given
  end
  given[i] = math.min(wanted, limit - before)
end
table.insert(given, 1, 0)
return given
"""

# A process takes a window's events from Redis in leases of 1/LEASE_SHARE of the limit
# (at least one) and spends them locally: a busy key costs one round trip per lease, not
# per request. The window's total can never pass the limit (a lease is counted when
# taken); what a process leaves unspent when the window ends is lost, at most
# 1/LEASE_SHARE of the limit per process and key.
LEASE_SHARE = 50


class RateLimiter:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix
        self._local: dict[str, tuple[int, int]] = {}  # key -> (window number, count), Redis unreachable
        self._leases: dict[str, tuple[float, int]] = {}  # window's key -> (window end, events left)
        self._taking: dict[str, asyncio.Future[None]] = {}  # window's key -> its lease being taken
        self._script = redis.register_script(_TAKE)

    async def hit(self, key: str, rate: Rate, *more: tuple[str, Rate]) -> Decision:
        """Count one event under `key` (and each further key, in order); refuse it at the
        first whose window's limit is passed (the keys after it are not counted)."""
        now = time.time()
        keyed = [(f"{self._prefix}:{k}:{int(now // r.window)}", r) for k, r in ((key, rate), *more)]
        while True:
            short = [i for i, (k, _) in enumerate(keyed) if self._leases.get(k, (0.0, 0))[1] <= 0]
            if not short:
                self._spend(keyed)
                return Decision(allowed=True)
            # One lease taken at a time per key: concurrent requests wait for it instead of
            # each taking one (32 at once would reserve 32 leases and spend one).
            taking = {id(f): f for i in short if (f := self._taking.get(keyed[i][0])) is not None}
            if taking:
                await asyncio.wait(list(taking.values()))
                continue
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            for i in short:
                self._taking[keyed[i][0]] = done
            try:
                refused = await self._take([keyed[i] for i in short], short, now)
            except (redis.exceptions.RedisError, OSError):
                return self._decision(keyed, self._local_hits(keyed, now), now)
            finally:
                for i in short:
                    self._taking.pop(keyed[i][0], None)
                done.set_result(None)
            if refused:
                self._spend(keyed[: refused - 1])
                return self._decision(keyed, refused, now)
            # Leases taken: spend them on the next turn (others may have spent some meanwhile).

    def _spend(self, keyed: list[tuple[str, Rate]]) -> None:
        for k, _ in keyed:
            end, left = self._leases.get(k, (0.0, 0))
            if left > 0:
                self._leases[k] = (end, left - 1)

    async def _take(self, wanted: list[tuple[str, Rate]], positions: list[int], now: float) -> int:
        """Lease events for the keys without any left; the position (from 1) in the whole
        list of the key refused, or 0."""
        args = [v for _, r in wanted for v in (r.limit, r.window + 1, max(1, r.limit // LEASE_SHARE))]
        answer = [int(x) for x in await self._script(keys=[k for k, _ in wanted], args=args)]
        refused, given = answer[0], answer[1:]
        if len(self._leases) > 50_000:
            self._leases = {k: v for k, v in self._leases.items() if v[0] > now}
        for (k, r), count in zip(wanted, given, strict=False):
            _, left = self._leases.get(k, (0.0, 0))
            self._leases[k] = ((int(now // r.window) + 1) * r.window, max(0, left) + count)
        return positions[refused - 1] + 1 if refused else 0

    @staticmethod
    def _decision(keyed: list[tuple[str, Rate]], refused: int, now: float) -> Decision:
        if not refused:
            return Decision(allowed=True)
        limit = keyed[refused - 1][1]
        window = int(now // limit.window)
        return Decision(allowed=False, retry_after=max(1, int((window + 1) * limit.window - now)))

    def _local_hits(self, keyed: list[tuple[str, Rate]], now: float) -> int:
        """The same rule in this process's memory, while Redis is unreachable."""
        for position, (key, rate) in enumerate(keyed, start=1):
            if self._local_hit(key, int(now // rate.window)) > rate.limit:
                return position
        return 0

    def _local_hit(self, key: str, window: int) -> int:
        if len(self._local) > 50_000:
            self._local = {k: v for k, v in self._local.items() if v[0] >= window}
        seen_window, count = self._local.get(key, (window, 0))
        count = count + 1 if seen_window == window else 1
        self._local[key] = (window, count)
        return count


class Lockout:
    """Progressive lockout after repeated failures (sign-in failures under a key):
    from the `threshold`-th failure within `window`, locked for `base` seconds,
    doubling with each further failure, at most `cap`."""

    def __init__(self, redis: aioredis.Redis, prefix: str, *, threshold: int, window: int, base: int, cap: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._threshold = threshold
        self._window = window
        self._base = base
        self._cap = cap
        self._local: dict[str, tuple[float, int, float]] = {}  # key -> (first failure, failures, locked until)

    async def locked_for(self, key: str) -> int:
        """Seconds the key stays locked (0: not locked)."""
        try:
            ttl = await self._redis.ttl(f"{self._prefix}:lock:{key}")
            return max(0, int(ttl))
        except (redis.exceptions.RedisError, OSError):
            _, _, until = self._local.get(key, (0.0, 0, 0.0))
            return max(0, int(until - time.time() + 0.999))

    async def failed(self, key: str) -> int:
        """Record a failure; return the lock it triggered in seconds (0: none)."""
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(f"{self._prefix}:fail:{key}", 0, ex=self._window, nx=True)  # the window starts
                pipe.incr(f"{self._prefix}:fail:{key}")
                _, failures = await pipe.execute()
        except (redis.exceptions.RedisError, OSError):
            return self._local_failed(key)
        seconds = self._lock_seconds(failures)
        if seconds:
            with contextlib.suppress(redis.exceptions.RedisError, OSError):
                await self._redis.set(f"{self._prefix}:lock:{key}", b"1", ex=seconds)
        return seconds

    async def succeeded(self, key: str) -> None:
        self._local.pop(key, None)
        with contextlib.suppress(redis.exceptions.RedisError, OSError):
            await self._redis.delete(f"{self._prefix}:fail:{key}")

    def _lock_seconds(self, failures: int) -> int:
        if failures < self._threshold:
            return 0
        return min(self._cap, self._base * 2 ** (failures - self._threshold))

    def _local_failed(self, key: str) -> int:
        now = time.time()
        first, failures, _ = self._local.get(key, (now, 0, 0.0))
        if now - first > self._window:
            first, failures = now, 0
        failures += 1
        seconds = self._lock_seconds(failures)
        self._local[key] = (first, failures, now + seconds)
        return seconds


class Cooldown:
    """At most one event per key every `seconds`: the first goes ahead and starts the
    wait. Falls back to this process's memory while Redis cannot be reached."""

    def __init__(self, redis: aioredis.Redis, prefix: str, *, seconds: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._seconds = seconds
        self._local: dict[str, float] = {}  # key -> until

    async def take(self, key: str) -> int:
        """0: go ahead (the wait starts now); otherwise the seconds still to wait."""
        name = f"{self._prefix}:{key}"
        try:
            if await self._redis.set(name, b"1", ex=self._seconds, nx=True):
                return 0
            return max(1, int(await self._redis.ttl(name)))
        except (redis.exceptions.RedisError, OSError):
            return self._local_take(key)

    def _local_take(self, key: str) -> int:
        now = time.time()
        if len(self._local) > 50_000:
            self._local = {k: until for k, until in self._local.items() if until > now}
        until = self._local.get(key, 0.0)
        if until > now:
            return max(1, int(until - now + 0.999))
        self._local[key] = now + self._seconds
        return 0
