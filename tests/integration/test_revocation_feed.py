"""The resource server's revocation feed on a real Redis behind a proxy that can
stall the connection without closing it, as a silent network partition does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

from courseschool.authz.storage.revocations import PgRedisRevoker
from courseschool.common.clock import SystemClock
from courseschool.common.redis import create_redis, deployment_channel
from courseschool.common.revocation import CHANNEL, RevocationEvent, jti_key
from courseschool.resource_api.auth.revocation_feed import CatchUp, RevocationFeed

from ..support.infra import kill_pubsub_connections, with_redis_database
from .tcp_proxy import TcpProxy, redis_proxy


class Token(msgspec.Struct, frozen=True):
    grant_id: str | None = None
    jti: str | None = None


async def _until(condition: Callable[[], bool], within: float) -> bool:
    async with asyncio.timeout(within):
        while not condition():
            await asyncio.sleep(0.02)
    return True


async def _revoke(redis_client, jti: str) -> None:
    """What the authorization server does for a revoked access token: a key, then a message."""
    await redis_client.set(jti_key(jti), 1, ex=600)
    await redis_client.publish(deployment_channel(redis_client, CHANNEL), msgspec.json.encode(RevocationEvent(jti=jti)))


@contextlib.asynccontextmanager
async def _feed_behind_a_proxy(redis_url: str, **options: Any) -> AsyncIterator[tuple[RevocationFeed, TcpProxy]]:
    """A started feed reaching Redis through a proxy. The proxy lets everything through
    again before the feed stops, so that a failed assertion does not hang the clean-up."""
    async with redis_proxy(redis_url) as proxy:
        redis = create_redis(proxy.url)
        feed = RevocationFeed(redis, **options)
        feed.start()
        try:
            yield feed, proxy
        finally:
            proxy.resume()
            proxy.release_new_connections()
            await feed.stop()
            await redis.aclose()


async def test_a_silent_connection_is_distrusted_then_reloaded(redis_url, redis_client) -> None:
    changes: list[bool] = []
    options = {"ping_every": 0.1, "silence": 1.0, "on_change": lambda: changes.append(feed.healthy)}
    async with _feed_behind_a_proxy(redis_url, **options) as (feed, proxy):
        assert await feed.wait_healthy()
        await asyncio.sleep(2.0)  # twice the silence limit with nothing to say: the pings keep it alive
        assert feed.healthy
        await _revoke(redis_client, "heard")
        assert await _until(lambda: feed.revoked(Token(jti="heard")), within=2.0)

        proxy.stall()  # the connection stays open, nothing comes through
        await _revoke(redis_client, "missed")  # published while the feed cannot hear it
        assert await _until(lambda: not feed.healthy, within=3.0)
        assert not feed.revoked(Token(jti="missed"))
        # the cached principals are dropped as the feed gives the connection up
        assert await _until(lambda: changes[-1] is False, within=2.0)

        proxy.resume()
        assert await feed.wait_healthy(5.0)
        assert feed.revoked(Token(jti="missed"))  # the reload after reconnecting found it
        assert feed.revoked(Token(jti="heard"))


async def test_a_closed_connection_is_distrusted_at_once_and_the_feed_comes_back(redis_url, redis_client) -> None:
    async with _feed_behind_a_proxy(redis_url) as (feed, proxy):
        assert await feed.wait_healthy()
        proxy.hold_new_connections()
        await kill_pubsub_connections(redis_client)
        assert await _until(lambda: not feed.healthy, within=1.0)
        await _revoke(redis_client, "while-away")
        await asyncio.sleep(0.5)  # the feed keeps trying; every attempt is held
        assert not feed.healthy
        proxy.release_new_connections()
        assert await feed.wait_healthy(10.0)
        assert feed.revoked(Token(jti="while-away"))


async def test_a_revocation_reaches_only_its_own_deployment(redis_url, redis_client, db_pool) -> None:
    """Two deployments on one Redis server, each in its own database: pub/sub ignores
    databases, so without a channel of its own each would clear its token cache on
    every revocation of the other, keeping the other's grant ids in its revoked set."""
    own_db = int(redis_client.connection_pool.connection_kwargs.get("db", 0))
    other_db = (own_db + 1) % 16  # only subscribed to, never written: whoever uses it loses nothing
    feeds: dict[str, RevocationFeed] = {}
    changes = {"own": 0, "other": 0}

    def counting(name: str):
        def changed() -> None:
            changes[name] += 1

        return changed

    clients = {"own": create_redis(redis_url), "other": create_redis(with_redis_database(redis_url, other_db))}
    try:
        for name, client in clients.items():
            feeds[name] = RevocationFeed(client, on_change=counting(name))
            feeds[name].start()
            assert await feeds[name].wait_healthy()
        before = dict(changes)
        revoker = PgRedisRevoker(db_pool, redis_client, access_token_ttl=600, clock=SystemClock())
        await revoker.announce_ended("7f1d7a52-3c1e-4c55-9a53-0c0ffee00001", reason="revoked_by_user")

        assert await _until(lambda: feeds["own"].revoked(Token(grant_id="7f1d7a52-3c1e-4c55-9a53-0c0ffee00001")), 2.0)
        assert changes["own"] == before["own"] + 1
        await asyncio.sleep(0.3)  # time enough for a message on the same server to arrive
        # The other database may be another test worker's, whose own revocations its feed
        # rightly hears: what must not reach it is this one.
        assert not feeds["other"].revoked(Token(grant_id="7f1d7a52-3c1e-4c55-9a53-0c0ffee00001"))
    finally:
        for feed in feeds.values():
            await feed.stop()
        for client in clients.values():
            await client.aclose()
        await redis_client.delete("revoked:grant:7f1d7a52-3c1e-4c55-9a53-0c0ffee00001")


class _Record:
    """The authorization server's record as the feed reads it, failing on demand."""

    def __init__(self) -> None:
        self.grants: set[str] = set()
        self.failing = False
        self.looks = 0

    async def revoked_since(self, moment: int) -> tuple[set[str], set[str]]:
        self.looks += 1
        if self.failing:
            raise OSError("the record cannot be read")
        return set(self.grants), set()


async def test_a_revocation_only_the_record_holds_is_caught_up(redis_url) -> None:
    record = _Record()
    redis = create_redis(redis_url)
    feed = RevocationFeed(redis, catch_up=CatchUp(record, SystemClock(), every=0.1, bound=1.0))
    feed.start()
    try:
        assert await feed.wait_healthy()
        record.grants.add("never-published")  # committed, never on the channel
        assert await _until(lambda: feed.revoked(Token(grant_id="never-published")), within=1.0)
    finally:
        await feed.stop()
        await redis.aclose()


async def test_a_feed_that_cannot_read_the_record_is_distrusted_within_the_bound(redis_url) -> None:
    record = _Record()
    changes: list[bool] = []
    redis = create_redis(redis_url)
    catch_up = CatchUp(record, SystemClock(), every=0.1, bound=1.0)
    feed = RevocationFeed(redis, catch_up=catch_up, on_change=lambda: changes.append(True))
    feed.start()
    try:
        assert await feed.wait_healthy()
        record.failing = True
        assert await _until(lambda: not feed.healthy, within=1.5)
        record.grants.add("while-unread")
        record.failing = False
        assert await feed.wait_healthy(2.0)
        assert feed.revoked(Token(grant_id="while-unread"))
    finally:
        await feed.stop()
        await redis.aclose()
