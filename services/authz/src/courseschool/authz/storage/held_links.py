"""An e-mailed link's token, held for the browser that opened it (the `cs_link` cookie of
the link's pages, web/account_links.py) in Redis with a short time limit: the link's
page answers its token-bearing URL with a redirect to the same path without the token,
so no later request, redirect or access log carries it. Losing it only means the person
opens the link from their e-mail again. Keyed by the digest of the cookie's value."""

from __future__ import annotations

from typing import cast

import redis.asyncio as aioredis

from courseschool.common.secrets import digest

_HELD = "authz:held-link:"


class RedisHeldLinks:
    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self._redis = redis
        self._ttl = ttl

    async def hold(self, binding: str, token: str) -> None:
        await self._redis.set(_HELD + digest(binding).hex(), token.encode(), ex=self._ttl)

    async def held(self, binding: str | None) -> str | None:
        if not binding or len(binding) > 128:
            return None
        raw = cast(bytes | None, await self._redis.get(_HELD + digest(binding).hex()))
        return raw.decode() if raw else None

    async def drop(self, binding: str) -> None:
        await self._redis.delete(_HELD + digest(binding).hex())
