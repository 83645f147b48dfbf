"""The Redis client. Redis holds only what may be lost (see DESIGN.md)."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError


def create_redis(url: str) -> aioredis.Redis:
    """Every client of the platform is made here. A connection error is retried once, on
    a new connection: a pooled connection made before Redis restarted fails at its next
    use, and without a retry (redis-py 8 retries nothing for a client made from a URL,
    not even its health check) that request answered 503 although Redis was back. A
    time-out is not retried (`retry_on_timeout=False`): a Redis that does not answer
    must cost a request one `socket_timeout`, not two."""
    return aioredis.from_url(
        url,
        socket_timeout=2.0,
        socket_connect_timeout=2.0,
        health_check_interval=30,
        retry_on_timeout=False,
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    )


def deployment_channel(client: aioredis.Redis, name: str) -> str:
    """The pub/sub channel `name` of the deployment this client belongs to. Redis delivers
    a message to every subscriber on the server, whatever database it selected, so the
    channel names the database too: two deployments sharing a Redis server (or two test
    runs sharing one) never hear each other's key changes or revocations."""
    return f"{name}:{client.connection_pool.connection_kwargs.get('db', 0)}"
