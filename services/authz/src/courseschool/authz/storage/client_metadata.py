"""Fetching Client ID Metadata Documents safely (the client they describe is built by
`client_directory.ClientDirectory`).

The fetch refuses to be turned against the platform's own network: HTTPS only; the
host is resolved first and every address must be public (no private, loopback,
link-local, multicast or reserved ranges, nor an IPv6 address carrying such an IPv4
one), and the connection goes to the address that was checked (the certificate is
still verified against the host name), so a DNS answer cannot change between the
check and the connection; no redirects; a size limit; and one time limit over the
lookup and the fetch together. The lookup runs on the fetcher's own few threads, so
a slow zone holds up neither other requests nor the loop's shared executor (where
every new database and Redis connection resolves its host). Answers are cached in
Redis as their Cache-Control allows, within bounds; failures are cached too, briefly.
Why a document was refused goes to the log only: the person and the client see one
message for every cause, so the server cannot be used to probe hosts and ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import socket
import ssl
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.jsonbody import decode_json
from courseschool.common.logging import audit, get_logger
from courseschool.common.outbound import default_tls

from ..protocol.client_id_metadata import (
    MetadataDocumentError,
    check_url,
    is_public_address,
)
from ..settings import AuthzSettings

log = get_logger(__name__)
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\b", re.IGNORECASE)
# Lookups in flight at once; more wait (within the time limit) for a free thread.
RESOLVER_THREADS = 4


class _Cached(msgspec.Struct):
    document: dict[str, Any] | None = None
    error: str | None = None


class DocumentWeb(NamedTuple):
    """Where documents are fetched from: the addresses the fetcher may connect to, and
    the certificate authorities it trusts (httpx's `verify`). The platform fetches from
    the public web only (`PUBLIC_WEB`), and no setting changes that; a test hands
    `create_app` one that reaches a site of its own (loopback, a test CA)."""

    allows: Callable[[str], bool] = is_public_address
    verify: ssl.SSLContext | bool = True


PUBLIC_WEB = DocumentWeb()


def _addresses(host: str, port: int) -> list[str]:
    """The host's addresses (a blocking getaddrinfo, run on the fetcher's own threads)."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


class MetadataDocumentFetcher:
    def __init__(self, settings: AuthzSettings, redis: aioredis.Redis, web: DocumentWeb = PUBLIC_WEB) -> None:
        self._settings = settings
        self._redis = redis
        self._allows = web.allows
        verify = default_tls(trust_env=False) if web.verify is True else web.verify
        self._http = httpx.AsyncClient(verify=verify, follow_redirects=False, trust_env=False)
        self._resolver = ThreadPoolExecutor(RESOLVER_THREADS, thread_name_prefix="cimd-resolver")

    async def aclose(self) -> None:
        await self._http.aclose()
        # A lookup stuck in a slow zone is not waited for; one still queued is dropped.
        self._resolver.shutdown(wait=False, cancel_futures=True)

    async def document(self, url: str, *, approved: bool) -> dict[str, Any]:
        """The document at `url` (cached), or MetadataDocumentError. The document of a
        client no user has approved is cached no longer than a pending request lasts:
        anyone can make the server fetch new URLs, so what they leave behind is bounded
        by INTERACTION_TTL as well as by the rate limits."""
        key = "authz:cimd:" + hashlib.sha256(url.encode()).hexdigest()
        cached = await self._cache_get(key)
        if cached is not None:
            if cached.error is not None:
                raise MetadataDocumentError(cached.error)
            assert cached.document is not None
            return cached.document
        try:
            document, ttl = await self._fetch(url)
        except MetadataDocumentError as exc:
            audit("client_metadata_refused", actor="system", client_id=url, reason=str(exc))
            await self._cache_put(key, _Cached(error=str(exc)), self._settings.cimd_failure_ttl)
            raise
        audit("client_metadata_fetched", actor="system", client_id=url)
        if not approved:
            ttl = min(ttl, self._settings.interaction_ttl)
        await self._cache_put(key, _Cached(document=document), ttl)
        return document

    async def _fetch(self, url: str) -> tuple[dict[str, Any], int]:
        host = check_url(url)
        parts = urlsplit(url)
        headers = {"Host": parts.netloc, "Accept": "application/json"}
        try:
            async with asyncio.timeout(self._settings.cimd_timeout):  # the lookup and the fetch together
                address = await self._checked_address(host, parts.port or 443)
                netloc = f"[{address}]" if ":" in address else address
                target = urlunsplit(("https", f"{netloc}:{parts.port or 443}", parts.path, parts.query, ""))
                async with self._http.stream(
                    "GET",
                    target,
                    headers=headers,
                    extensions={"sni_hostname": host},
                    timeout=self._settings.cimd_timeout,
                ) as response:
                    body = await self._read_limited(response)
        except TimeoutError:
            raise MetadataDocumentError("resolving and fetching the metadata document timed out") from None
        except httpx.HTTPError as exc:
            raise MetadataDocumentError(f"the metadata document could not be fetched ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise MetadataDocumentError(f"the metadata document URL answered {response.status_code}, not 200")
        if response.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise MetadataDocumentError("the metadata document must be application/json")
        document = decode_json(body, invalid=MetadataDocumentError, what="the metadata document")
        if not isinstance(document, dict):
            raise MetadataDocumentError("the metadata document must be a JSON object")
        return document, self._ttl(response.headers.get("cache-control", ""))

    async def _checked_address(self, host: str, port: int) -> str:
        try:
            addresses = await asyncio.get_running_loop().run_in_executor(self._resolver, _addresses, host, port)
        except (OSError, UnicodeError):  # UnicodeError: a host name IDNA cannot encode
            raise MetadataDocumentError("the client_id URL's host does not resolve") from None
        if not addresses:
            raise MetadataDocumentError("the client_id URL's host does not resolve")
        if not all(self._allows(a) for a in addresses):
            raise MetadataDocumentError("the client_id URL's host is not a public address")
        return addresses[0]

    async def _read_limited(self, response: httpx.Response) -> bytes:
        limit = self._settings.cimd_max_bytes
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise MetadataDocumentError(f"the metadata document is larger than {limit} bytes")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise MetadataDocumentError(f"the metadata document is larger than {limit} bytes")
        return bytes(body)

    def _ttl(self, cache_control: str) -> int:
        low, high = self._settings.cimd_cache_min, self._settings.cimd_cache_max
        if _NO_CACHE.search(cache_control):
            return low
        match = _MAX_AGE.search(cache_control)
        return min(max(int(match.group(1)), low), high) if match else low

    async def _cache_get(self, key: str) -> _Cached | None:
        try:
            raw = await self._redis.get(key)
        except (redis.exceptions.RedisError, OSError):
            return None
        return msgspec.json.decode(raw, type=_Cached) if raw else None

    async def _cache_put(self, key: str, value: _Cached, ttl: int) -> None:
        with contextlib.suppress(redis.exceptions.RedisError, OSError):
            await self._redis.set(key, msgspec.json.encode(value), ex=max(1, ttl))
