"""The resource server's revocation feed on a real Redis behind a proxy that can
stall the connection without closing it, as a silent network partition does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

from courseschool.common.redis import create_redis
from courseschool.common.revocation import CHANNEL, RevocationEvent, jti_key
from courseschool.resource_api.auth.revocation_feed import RevocationFeed

from ..support.infra import kill_pubsub_connections
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
    await redis_client.publish(CHANNEL, msgspec.json.encode(RevocationEvent(jti=jti)))


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
