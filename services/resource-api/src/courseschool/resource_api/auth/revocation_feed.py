"""The revocations the authorization server publishes, kept in this process.

Revocations are written to Postgres by the authorization server, then published on
a Redis channel and as keys with an expiry. A resource server subscribes, loads the
current set (the keys, plus the authorization server's record in Postgres over its
internal endpoint, so a flushed Redis cannot make a revoked token good again), and
applies every message after. While the feed is lost nothing is trusted from memory.

A message Redis never carried (a write refused under `noeviction`, a publisher that died
after its commit) leaves no gap the channel could show, so the feed also reads the
record in Postgres every second for what was revoked since its last look, and trusts its
memory only while a look succeeded within the fan-out bound (`common/revocation.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx
import msgspec
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import get_logger
from courseschool.common.redis import deployment_channel
from courseschool.common.revocation import (
    CATCH_UP_EVERY,
    CATCH_UP_OVERLAP,
    CHANNEL,
    FANOUT_BOUND,
    RevocationEvent,
)

log = get_logger(__name__)

# Seconds between two attempts to subscribe at most (they begin at 0.2 and double). An
# attempt costs a connection (and, with Sentinel, a question to a sentinel); while the feed
# is away every API call is introspected, so a failover's promoted master is found again
# within this of its promotion.
RESUBSCRIBE_CAP = 2.0


class Revocable(Protocol):
    @property
    def grant_id(self) -> str | None: ...

    @property
    def jti(self) -> str | None: ...


class RevocationRecord(Protocol):
    async def revoked_since(self, moment: int) -> tuple[set[str], set[str]]: ...


class CatchUp:
    """The looks at the authorization server's record in Postgres, every `every`
    seconds, for what was revoked since the previous look began (less
    `CATCH_UP_OVERLAP`): what the channel did not carry arrives by the next look, and
    `fresh` is false once no look has succeeded for `bound` seconds."""

    def __init__(
        self, record: RevocationRecord, clock: Clock, *, every: float = CATCH_UP_EVERY, bound: float = FANOUT_BOUND
    ) -> None:
        self._record = record
        self._clock = clock
        self._every = every
        self._bound = bound
        self._began = -math.inf  # time.monotonic() at the start of the last look that succeeded
        self._since: int | None = None  # the application's time the last look that succeeded began
        self.looked = asyncio.Event()  # set by each look that succeeds, cleared by one that fails

    @property
    def fresh(self) -> bool:
        return time.monotonic() - self._began < self._bound

    async def run(self, found: Callable[[set[str], set[str]], None], stopping: Callable[[], bool]) -> None:
        failing = False
        while not stopping():
            began, now = time.monotonic(), self._clock.now()
            since = (now if self._since is None else min(self._since, now)) - CATCH_UP_OVERLAP
            try:
                async with asyncio.timeout(self._bound):
                    grants, jtis = await self._record.revoked_since(since)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever failed, memory is trusted only until the bound
                if not failing:
                    log.warning("revocation_catch_up_failed", error=type(exc).__name__)
                failing = True
                self.looked.clear()
            else:
                failing = False
                self._since, self._began = now, began
                self.looked.set()
                found(grants, jtis)
            await asyncio.sleep(self._every)


class FeedLost(Exception):
    """The feed's connection closed, failed or went silent."""


class RevocationFeed(BackgroundLoop):
    """The revoked grants and token ids, kept in memory from the Redis feed.

    `healthy` is true only while subscribed, after the set was (re)loaded, while the
    connection is heard from and the record in Postgres was read in time (`CatchUp`):
    while it is false nothing may be trusted from memory, and callers ask the
    authorization server instead.

    A lost connection must count as lost at once. The feed therefore reads its
    subscription itself instead of through redis-py's `PubSub.get_message`, which on a
    dropped connection reconnects and resubscribes *before* raising: the feed would
    look healthy through the reconnection although a revocation published meanwhile
    never reaches it. A connection that stops answering without closing (a silent
    partition) is caught by pinging it every `ping_every` seconds: after `silence`
    seconds without a byte from the server the feed is unhealthy, then reconnects.
    """

    name = "revocation_feed"

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        on_change: Any = None,
        loader: Any = None,
        ping_every: float = 1.0,
        silence: float = 3.0,
        catch_up: CatchUp | None = None,
    ) -> None:
        self._redis = redis
        self._loader = loader  # the current revocations from authz: a flushed Redis revives none
        self._grants: set[str] = set()
        self._jtis: set[str] = set()
        self._on_change = on_change or (lambda: None)
        self._connected = asyncio.Event()
        self._heard = -math.inf  # time.monotonic() of the last bytes from the server
        self._ping_every = ping_every
        self._silence = silence
        self._catch_up = catch_up  # the looks at the record in Postgres
        super().__init__()

    @property
    def healthy(self) -> bool:
        caught_up = self._catch_up is None or self._catch_up.fresh
        return caught_up and self._connected.is_set() and time.monotonic() - self._heard < self._silence

    def revoked(self, principal: Revocable) -> bool:
        return (principal.grant_id in self._grants) or (principal.jti in self._jtis)

    async def wait_healthy(self, within: float = 5.0) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._connected.wait()
                if self._catch_up is not None:
                    await self._catch_up.looked.wait()  # the first look at the record may still be under way
        return self.healthy

    def _apply(self, event: RevocationEvent) -> None:
        if event.grant_id:
            self._grants.add(event.grant_id)
        if event.jti:
            self._jtis.add(event.jti)
        self._on_change()

    def _lost(self, error: BaseException) -> None:
        """Distrust memory now: called before anything else awaits."""
        if self._connected.is_set():
            log.warning("revocation_feed_lost", error=type(error).__name__)
        self._connected.clear()
        self._on_change()

    async def _load(self) -> None:
        grants: set[str] = set()
        jtis: set[str] = set()
        async for key in self._redis.scan_iter(match="revoked:*", count=1000):
            kind, _, value = key.decode().removeprefix("revoked:").partition(":")
            (grants if kind == "grant" else jtis).add(value)
        if self._loader is not None:
            record = await self._loader()
            grants.update(record["grant_ids"])
            jtis.update(record["jtis"])
        else:  # the keys alone may lack what a look at the record found: keep it
            grants |= self._grants
            jtis |= self._jtis
        self._grants, self._jtis = grants, jtis

    async def _run(self) -> None:
        async with asyncio.TaskGroup() as loops:  # a stop cancels both
            if self._catch_up is not None:
                loops.create_task(self._catch_up.run(self._missed, lambda: self.stopping))
            loops.create_task(self._subscribed())

    def _missed(self, grants: set[str], jtis: set[str]) -> None:
        """What a look at the record found: applied if the channel did not carry it."""
        missed_grants, missed_jtis = grants - self._grants, jtis - self._jtis
        if missed_grants or missed_jtis:
            log.info("revocation_caught_up", grants=len(missed_grants), jtis=len(missed_jtis))
            self._grants |= missed_grants
            self._jtis |= missed_jtis
            self._on_change()

    async def _subscribed(self) -> None:
        delay = 0.2
        while not self.stopping:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.subscribe(deployment_channel(self._redis, CHANNEL))
                await self._load()  # after subscribing: nothing published in between is lost
                self._heard = time.monotonic()  # the silence is counted from here, and pinged at once
                self._connected.set()
                self._on_change()
                delay = 0.2
                log.info("revocation_feed_connected")
                await self._follow(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the connection is gone, whatever the cause: trust nothing cached
                self._lost(exc)
            finally:
                with contextlib.suppress(Exception):  # closing a connection that is already gone
                    await pubsub.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RESUBSCRIBE_CAP)

    async def _follow(self, pubsub: PubSub) -> None:
        """Apply every message on the subscription's own connection, pinging it while idle."""
        connection = pubsub.connection
        assert connection is not None  # subscribed
        next_ping = time.monotonic()
        while not self.stopping:
            now = time.monotonic()
            if not connection.is_connected:
                raise FeedLost("the connection closed")  # never let the client reconnect it unseen
            if now - self._heard >= self._silence:
                raise FeedLost(f"nothing heard for {self._silence} s")
            if now >= next_ping:
                await connection.send_command("PING", check_health=False)
                next_ping = now + self._ping_every
            # Short reads, so that stopping, pinging and the silence check are never held up.
            wait = min(next_ping, self._heard + self._silence) - now
            response = await connection.read_response(
                timeout=max(wait, 0.01), disconnect_on_error=False, push_request=True
            )
            if response is None:
                continue
            self._heard = time.monotonic()
            message = await pubsub.handle_message(response, ignore_subscribe_messages=True)
            if message is not None and message.get("type") == "message":
                self._apply(msgspec.json.decode(message["data"], type=RevocationEvent))


class RevocationSource:
    """The authorization server's current revocations, over its internal endpoint."""

    def __init__(self, http: httpx.AsyncClient, internal_token: str | None) -> None:
        self._http = http
        self._token = internal_token

    async def __call__(self) -> dict[str, list[str]]:
        response = await self._http.get(
            "/internal/revocations", headers={"Authorization": f"Bearer {self._token}"}, timeout=3.0
        )
        response.raise_for_status()
        return response.json()
