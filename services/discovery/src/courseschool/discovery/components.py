"""What the discovery service's routes work with, built once per process by the
composition root (`app.py`) and kept on `app.state.discovery`: the document cache over
the clients of the upstream services and Redis (the last good copy)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import redis.asyncio as aioredis

from courseschool.common.outbound import default_tls
from courseschool.common.redis import create_redis

from .documents import DocumentCache
from .settings import DiscoverySettings


@dataclass(frozen=True, kw_only=True, slots=True)
class Components:
    documents: DocumentCache
    owned: tuple[httpx.AsyncClient, ...]  # the upstream clients made here (closed with the app)
    redis: aioredis.Redis | None

    @classmethod
    def build(cls, settings: DiscoverySettings, upstreams: dict[str, httpx.AsyncClient] | None) -> Components:
        """`upstreams` given by the caller (the all-in-one, a test) stay the caller's to
        close; without them, one client per service at its internal URL."""
        clients = upstreams or {
            "authz": httpx.AsyncClient(base_url=settings.authz_internal_url, verify=default_tls()),
            "resource": httpx.AsyncClient(base_url=settings.resource_internal_url, verify=default_tls()),
        }
        redis = create_redis(settings.redis_url, settings.redis_sentinel) if settings.redis_url else None
        return cls(
            documents=DocumentCache(clients, settings.internal_token, settings.metadata_cache_ttl, redis),
            owned=tuple(clients.values()) if upstreams is None else (),
            redis=redis,
        )

    async def close(self) -> None:
        for client in self.owned:
            await client.aclose()
        if self.redis is not None:
            await self.redis.aclose()
