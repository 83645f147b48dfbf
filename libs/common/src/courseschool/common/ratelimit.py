"""Rate limits: fixed-window counters in Redis, shared by every replica.

When Redis cannot be reached the counters fall back to this process's memory, so no
limit becomes unlimited and no request fails because of the limiter itself (each
replica then enforces the limit on its own share of the traffic).
"""

from __future__ import annotations

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


# Count one event under each key in order, setting each window's expiry on its first
# hit; stop at the first key whose limit is passed (the keys after it are not counted)
# and return its position, or 0. One atomic round trip whatever the number of keys (a
# MULTI/EXEC pipeline per key cost several times the client-side work, see
# bench/RESULTS.md). ARGV holds (limit, ttl) per key.
_HIT = """
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
  if count > tonumber(ARGV[2 * i - 1]) then return i end
end
return 0
"""


class RateLimiter:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix
        self._local: dict[str, tuple[int, int]] = {}  # key -> (window number, count)
        self._script = redis.register_script(_HIT)

    async def hit(self, key: str, rate: Rate, *more: tuple[str, Rate]) -> Decision:
        """Count one event under `key` (and each further key, in order); refuse it at the
        first whose window's limit is passed."""
        now = time.time()
        keyed = [(f"{self._prefix}:{k}:{int(now // r.window)}", r) for k, r in ((key, rate), *more)]
        try:
            refused = int(
                await self._script(
                    keys=[k for k, _ in keyed], args=[v for _, r in keyed for v in (r.limit, r.window + 1)]
                )
            )
        except (redis.exceptions.RedisError, OSError):
            refused = self._local_hits(keyed, now)
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
