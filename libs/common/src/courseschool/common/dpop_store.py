"""Where the DPoP checker keeps its state (the `DpopStore` port of
`courseschool.common.dpop`): the `jti` of every proof seen, for as long as the proof
could be accepted, and the server nonce of each period.

Redis holds both, shared by every replica: one `SET NX EX` per proof (a fixed-size key,
the proof key's thumbprint and a digest of the `jti`, so an entry costs the same
whatever a client sends), and one nonce per period, made by whichever replica asks
first. While Redis cannot be reached, this process's memory takes over, bounded, so
DPoP keeps working on each replica for its own share of the traffic; what it took then
stays refused here once Redis answers again. A proof id Redis lost (a failover to a
replica it had not reached, a proof another process took while Redis was away) can be
replayed once, and only while the proof's `iat` is within the window (docs/capacity.md).
"""

from __future__ import annotations

import itertools

import redis.asyncio as aioredis
import redis.exceptions

from .clock import Clock, SystemClock
from .logging import get_logger
from .secrets import new_token

log = get_logger(__name__)

# The Redis prefix of every service's DPoP state. One for all: the authorization server
# and the resource API of one origin then hand out the same nonce (clients keep one nonce
# per origin), and a proof is good for one URI only, so their jti never collide.
DPOP_KEYS = "dpop"


class MemoryDpopStore:
    """This process's memory: at most `limit` proofs remembered; past that the expired
    ones go first, then the oldest. Time is the checker's clock: a key recorded for
    `ttl` seconds at second `now` is forgotten at second `now + ttl`, as Redis forgets it
    at the latest."""

    def __init__(self, limit: int = 100_000, *, clock: Clock | None = None) -> None:
        self._limit = limit
        self._clock = clock or SystemClock()
        self._seen: dict[str, int] = {}  # key -> the second it is forgotten at
        self._nonces: dict[int, str] = {}

    async def first_use(self, key: str, ttl: int) -> bool:
        now = self._clock.now()
        expiry = self._seen.get(key)
        if expiry is not None and expiry > now:
            return False
        if len(self._seen) >= self._limit:
            self._seen = {k: e for k, e in self._seen.items() if e > now}
            for oldest in list(itertools.islice(self._seen, max(0, len(self._seen) - self._limit + 1))):
                del self._seen[oldest]
        self._seen[key] = now + ttl
        return True

    def remembers(self, key: str) -> bool:
        """Whether `key` was recorded here and is not forgotten yet."""
        expiry = self._seen.get(key)
        return expiry is not None and expiry > self._clock.now()

    async def nonce(self, window: int, ttl: int) -> str:
        if window not in self._nonces:
            self._nonces = {w: n for w, n in self._nonces.items() if w >= window - 2}
            self._nonces[window] = new_token(16)
        return self._nonces[window]


class RedisDpopStore:
    def __init__(self, redis: aioredis.Redis, prefix: str, *, clock: Clock | None = None) -> None:
        self._redis = redis
        self._prefix = prefix
        self._fallback = MemoryDpopStore(clock=clock)

    async def first_use(self, key: str, ttl: int) -> bool:
        # A proof this process took while Redis was away is in its memory only: Redis (back,
        # or a promoted replica) never heard of it, and must not be asked alone.
        if self._fallback.remembers(key):
            return False
        try:
            return bool(await self._redis.set(f"{self._prefix}:jti:{key}", b"1", nx=True, ex=ttl))
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("dpop_store_unavailable", error=type(exc).__name__)
            return await self._fallback.first_use(key, ttl)

    async def nonce(self, window: int, ttl: int) -> str:
        key = f"{self._prefix}:nonce:{window}"
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(key, new_token(16), nx=True, ex=ttl)
                pipe.get(key)
                _, value = await pipe.execute()
            return value.decode() if isinstance(value, bytes) else str(value)
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("dpop_store_unavailable", error=type(exc).__name__)
            return await self._fallback.nonce(window, ttl)
