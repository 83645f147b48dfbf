"""The aggregated documents: fetched from the services' internal endpoints, kept as
pre-serialised bytes, refreshed after a time-to-live, and served from the last good
copy while an upstream is down."""

from __future__ import annotations

import hashlib
import time

import httpx
import msgspec

from courseschool.common.errors import TemporarilyUnavailableError
from courseschool.common.logging import get_logger
from courseschool.common.web import REQUEST_ID_HEADER, current_request_id

log = get_logger(__name__)


class Document(msgspec.Struct, frozen=True):
    body: bytes
    etag: str
    fetched_at: float


class Source(msgspec.Struct, frozen=True):
    upstream: str  # key into the upstream clients
    path: str


class DocumentCache:
    def __init__(self, upstreams: dict[str, httpx.AsyncClient], internal_token: str | None, ttl: int) -> None:
        self._upstreams = upstreams
        self._token = internal_token
        self._ttl = ttl
        self._docs: dict[Source, Document] = {}

    async def get(self, source: Source) -> Document:
        cached = self._docs.get(source)
        if cached is not None and time.monotonic() - cached.fetched_at < self._ttl:
            return cached
        try:
            fresh = await self._fetch(source)
        except (httpx.HTTPError, ValueError, msgspec.DecodeError) as exc:
            log.warning("upstream_unavailable", upstream=source.upstream, path=source.path, error=type(exc).__name__)
            if cached is not None:
                return cached
            raise TemporarilyUnavailableError("the metadata is not available yet; try again shortly") from None
        self._docs[source] = fresh
        return fresh

    async def _fetch(self, source: Source) -> Document:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        request_id = current_request_id()
        if request_id:
            headers[REQUEST_ID_HEADER] = request_id
        response = await self._upstreams[source.upstream].get(source.path, headers=headers, timeout=3.0)
        if response.status_code != 200:
            raise ValueError(f"upstream answered {response.status_code}")
        body = msgspec.json.encode(msgspec.json.decode(response.content))  # validate and normalise
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        return Document(body=body, etag=etag, fetched_at=time.monotonic())
