"""Fetching Client ID Metadata Documents safely, and the client directory that knows
both kinds of client.

The fetch refuses to be turned against the platform's own network: HTTPS only; the
host is resolved first and every address must be public (no private, loopback,
link-local, multicast or reserved ranges), and the connection goes to the address
that was checked (the certificate is still verified against the host name), so a
DNS answer cannot change between the check and the connection; no redirects; a time
limit and a size limit. Answers are cached in Redis as their Cache-Control allows,
within bounds; failures are cached too, briefly.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.logging import get_logger

from ..protocol.client_id_metadata import MetadataDocumentError, check_url, client_from_document, is_metadata_url
from ..protocol.clock import Clock
from ..protocol.models import Client
from ..settings import AuthzSettings
from .clients import PgClientStore

log = get_logger(__name__)
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\b", re.IGNORECASE)


class _Cached(msgspec.Struct):
    document: dict[str, Any] | None = None
    error: str | None = None


def _public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved)


class MetadataDocumentFetcher:
    def __init__(self, settings: AuthzSettings, redis: aioredis.Redis) -> None:
        self._settings = settings
        self._redis = redis
        context = ssl.create_default_context(cafile=settings.cimd_ca_bundle) if settings.cimd_ca_bundle else True
        self._http = httpx.AsyncClient(verify=context, follow_redirects=False, trust_env=False)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def document(self, url: str) -> dict[str, Any]:
        """The document at `url` (cached), or MetadataDocumentError."""
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
            log.warning("client_metadata_refused", client_id=url, reason=str(exc))
            await self._cache_put(key, _Cached(error=str(exc)), self._settings.cimd_failure_ttl)
            raise
        await self._cache_put(key, _Cached(document=document), ttl)
        return document

    async def _fetch(self, url: str) -> tuple[dict[str, Any], int]:
        host = check_url(url)
        parts = urlsplit(url)
        address = await self._checked_address(host, parts.port or 443)
        netloc = f"[{address}]" if ":" in address else address
        target = urlunsplit(("https", f"{netloc}:{parts.port or 443}", parts.path, parts.query, ""))
        headers = {"Host": parts.netloc, "Accept": "application/json"}
        try:
            async with asyncio.timeout(self._settings.cimd_timeout):
                async with self._http.stream(
                    "GET", target, headers=headers, extensions={"sni_hostname": host},
                    timeout=self._settings.cimd_timeout,
                ) as response:
                    body = await self._read_limited(response)
        except TimeoutError:
            raise MetadataDocumentError("fetching the metadata document timed out") from None
        except httpx.HTTPError as exc:
            raise MetadataDocumentError(f"the metadata document could not be fetched ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise MetadataDocumentError(f"the metadata document URL answered {response.status_code}, not 200")
        if response.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise MetadataDocumentError("the metadata document must be application/json")
        try:
            document = msgspec.json.decode(body)
        except msgspec.DecodeError:
            raise MetadataDocumentError("the metadata document is not valid JSON") from None
        if not isinstance(document, dict):
            raise MetadataDocumentError("the metadata document must be a JSON object")
        return document, self._ttl(response.headers.get("cache-control", ""))

    async def _checked_address(self, host: str, port: int) -> str:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise MetadataDocumentError("the client_id URL's host does not resolve") from None
        addresses = [info[4][0] for info in infos]
        if not addresses:
            raise MetadataDocumentError("the client_id URL's host does not resolve")
        if not self._settings.cimd_allow_private and not all(_public_address(a) for a in addresses):
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
        try:
            await self._redis.set(key, msgspec.json.encode(value), ex=max(1, ttl))
        except (redis.exceptions.RedisError, OSError):
            pass


class ClientDirectory:
    """The `ClientStore` port over both kinds of client: registered ones in Postgres,
    and those identified by a metadata document URL (recorded in Postgres on use)."""

    def __init__(self, clients: PgClientStore, fetcher: MetadataDocumentFetcher | None, clock: Clock) -> None:
        self._clients = clients
        self._fetcher = fetcher
        self._clock = clock

    async def get(self, client_id: str) -> Client | None:
        if self._fetcher is None or not is_metadata_url(client_id):
            return await self._clients.get(client_id)
        return (await self.resolve(client_id))[0]

    async def resolve(self, url: str) -> tuple[Client | None, str | None]:
        """(client, None), or (None, why the document cannot be used)."""
        assert self._fetcher is not None
        try:
            document = await self._fetcher.document(url)
            client = client_from_document(url, document, now=self._clock.now())
        except MetadataDocumentError as exc:
            return None, str(exc)
        return await self._clients.record_document_client(client), None
