"""The aggregated documents: fetched from the services' internal endpoints, kept as
pre-serialised bytes in process and in Redis, refreshed after a time-to-live, and
served from the last good copy (in process, else Redis) while an upstream is down."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import httpx
import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.errors import TemporarilyUnavailableError
from courseschool.common.http import Held, etag_of
from courseschool.common.logging import get_logger
from courseschool.common.metrics import CACHE
from courseschool.common.web import REQUEST_ID_HEADER, current_request_id

log = get_logger(__name__)
_REDIS_PREFIX = "discovery:doc:"


class Document(Held, frozen=True):
    fetched_at: float = 0.0


_HITS, _MISSES = CACHE.labels("discovery_documents", "hit"), CACHE.labels("discovery_documents", "miss")


class Source(msgspec.Struct, frozen=True):
    upstream: str  # key into the upstream clients
    path: str

    @property
    def key(self) -> str:
        return f"{self.upstream}{self.path}"


def make_document(body: bytes, media_type: str = "application/json") -> Document:
    return Document(body=body, etag=etag_of(body), media_type=media_type, fetched_at=time.monotonic())


class DocumentCache:
    def __init__(
        self,
        upstreams: dict[str, httpx.AsyncClient],
        internal_token: str | None,
        ttl: int,
        redis: aioredis.Redis | None = None,
    ) -> None:
        self._upstreams = upstreams
        self._token = internal_token
        self._ttl = ttl
        self._redis = redis
        self._docs: dict[str, Document] = {}

    async def get(self, source: Source) -> Document:
        return await self.cached(source.key, lambda: self._fetch(source))

    def fresh(self, key: str) -> Document | None:
        """The document under `key` if one is held and its TTL has not passed (a hit)."""
        held = self._docs.get(key)
        if held is not None and time.monotonic() - held.fetched_at < self._ttl:
            _HITS.inc()
            return held
        return None

    async def cached(self, key: str, produce: Callable[[], Awaitable[bytes]]) -> Document:
        """The document under `key`: fresh from `produce` once the TTL passed, else the
        last good copy, from memory or Redis, while `produce` fails."""
        fresh = self.fresh(key)
        if fresh is not None:
            return fresh
        held = self._docs.get(key)
        _MISSES.inc()
        try:
            body = await produce()
        except (httpx.HTTPError, ValueError, msgspec.DecodeError) as exc:
            log.warning("upstream_unavailable", document=key, error=type(exc).__name__)
            last = held or await self._from_redis(key)
            if last is None:
                raise TemporarilyUnavailableError("the document is not available yet; try again shortly") from None
            self._docs[key] = msgspec.structs.replace(last, fetched_at=time.monotonic() - self._ttl + 5)  # retry in 5 s
            return last
        fresh = self._docs[key] = make_document(body)  # equal bodies give equal ETags
        if held is None or held.body != body:
            await self._to_redis(key, body)
        return fresh

    async def json(self, source: Source) -> Any:
        return msgspec.json.decode((await self.get(source)).body)

    async def _fetch(self, source: Source) -> bytes:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        request_id = current_request_id()
        if request_id:
            headers[REQUEST_ID_HEADER] = request_id
        response = await self._upstreams[source.upstream].get(source.path, headers=headers, timeout=3.0)
        if response.status_code != 200:
            raise ValueError(f"upstream answered {response.status_code}")
        return msgspec.json.encode(msgspec.json.decode(response.content))  # validate and normalise

    async def _from_redis(self, key: str) -> Document | None:
        if self._redis is None:
            return None
        try:
            body = cast(bytes | None, await self._redis.get(_REDIS_PREFIX + key))
        except (redis.exceptions.RedisError, OSError):
            return None
        return make_document(body) if body else None

    async def _to_redis(self, key: str, body: bytes) -> None:
        if self._redis is None:
            return
        try:
            await self._redis.set(_REDIS_PREFIX + key, body)
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("document_cache_write_failed", error=type(exc).__name__)
