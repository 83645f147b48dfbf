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
