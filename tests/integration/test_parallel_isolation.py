"""The parallel suite's isolation on a shared Redis server (tests/support/infra.py): a test that
ends the revocation feed's connection ends only the pub/sub connections of its own
database, never those of another xdist worker (or another run) on the same server."""

from __future__ import annotations

import secrets

import redis.asyncio as aioredis

from ..support.infra import kill_pubsub_connections


def _client(like: aioredis.Redis, db: int, name: str) -> aioredis.Redis:
    pool = like.connection_pool
    kwargs = {**pool.connection_kwargs, "db": db, "client_name": name}
    return aioredis.Redis(connection_pool=aioredis.ConnectionPool(connection_class=pool.connection_class, **kwargs))


async def _pubsub_names(redis: aioredis.Redis) -> set[str]:
    return {client.get("name", "") for client in await redis.client_list(_type="pubsub")}


async def test_killing_pubsub_connections_spares_the_other_databases(redis_client) -> None:
    own_db = int(redis_client.connection_pool.connection_kwargs.get("db", 0))
    other_db = (own_db + 1) % 16  # only subscribed to, never written: whoever uses it loses nothing
    tag = secrets.token_hex(4)
    own_name, other_name = f"cs-isolation-own-{tag}", f"cs-isolation-other-{tag}"
    own, other = _client(redis_client, own_db, own_name), _client(redis_client, other_db, other_name)
    own_sub, other_sub = own.pubsub(), other.pubsub()
    try:
        await own_sub.subscribe(f"cs-isolation-{tag}")
        await other_sub.subscribe(f"cs-isolation-{tag}")
        assert {own_name, other_name} <= await _pubsub_names(redis_client)

        assert await kill_pubsub_connections(redis_client) >= 1

        names = await _pubsub_names(redis_client)
        assert own_name not in names, "the own database's pub/sub connection was not ended"
        assert other_name in names, "another database's pub/sub connection was ended"
    finally:
        for closing in (own_sub, other_sub):
            await closing.aclose()
        await own.aclose()
        await other.aclose()
