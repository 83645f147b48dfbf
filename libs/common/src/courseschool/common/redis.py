"""The Redis client. Redis holds only what may be lost (see DESIGN.md)."""

from __future__ import annotations

import redis.asyncio as aioredis


def create_redis(url: str) -> aioredis.Redis:
    return aioredis.from_url(
        url,
        socket_timeout=2.0,
        socket_connect_timeout=2.0,
        health_check_interval=30,
        retry_on_timeout=False,
    )


def deployment_channel(client: aioredis.Redis, name: str) -> str:
    """The pub/sub channel `name` of the deployment this client belongs to. Redis delivers
    a message to every subscriber on the server, whatever database it selected, so the
    channel names the database too: two deployments sharing a Redis server (or two test
    runs sharing one) never hear each other's key changes or revocations."""
    return f"{name}:{client.connection_pool.connection_kwargs.get('db', 0)}"
