"""Origins a browser sends (RFC 6454), and the registered ones a cross-origin path of
ours answers (`common/cors.py`): no web framework here, so the stores that list the
registered origins and the admin command import it without one."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Set
from urllib.parse import urlsplit

import msgspec

from .logging import get_logger

log = get_logger(__name__)

# RFC 6454 §6.2's serialisation of a loopback origin as a browser sends it: scheme and
# host in lower case, the port only when it is not the scheme's default.
_LOOPBACK_ORIGIN = re.compile(r"http://(?:localhost|127\.0\.0\.1|\[::1\])(?::[1-9][0-9]{0,4})?")


def is_loopback_origin(origin: str) -> bool:
    return _LOOPBACK_ORIGIN.fullmatch(origin) is not None


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(uri: str) -> str | None:
    """The serialised origin (RFC 6454 §6.2) of an absolute http(s) URI, as a browser
    sends it in `Origin`; None for anything else."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" if port in (None, _DEFAULT_PORTS[scheme]) else f"{scheme}://{host}:{port}"


class ClientOriginList(msgspec.Struct, frozen=True):
    """The wire form of the registered origins, from the authorization server (which
    owns clients) to resource servers: `GET /internal/client-origins`."""

    origins: list[str]


CLIENT_ORIGINS_PATH = "/internal/client-origins"


class ClientOrigins:
    """The registered origins (non-loopback) a `CLIENT_ORIGINS` path answers, kept in
    memory: `load` gives the whole set (a preflight carries no client id, so the set
    cannot depend on the request); it is loaded again when older than `ttl`, or when an
    origin it lacks asks and the last load is older than `miss_every` (a client an
    administrator just made works within a second; unknown origins cost at most one
    load a second). A failed load keeps the last good set (none at first)."""

    def __init__(
        self,
        load: Callable[[], Awaitable[Set[str]]],
        *,
        ttl: float = 30.0,
        miss_every: float = 1.0,
    ) -> None:
        self._load = load
        self._ttl = ttl
        self._miss_every = miss_every
        self._origins: frozenset[str] = frozenset()
        self._loaded_at = -float("inf")
        self._lock = asyncio.Lock()

    async def allows(self, origin: str) -> bool:
        age = time.monotonic() - self._loaded_at
        if age > self._ttl or (origin not in self._origins and age > self._miss_every):
            await self._reload(asked_at=time.monotonic())
        return origin in self._origins

    async def _reload(self, *, asked_at: float) -> None:
        async with self._lock:
            if self._loaded_at >= asked_at:  # another request loaded it meanwhile
                return
            try:
                self._origins = frozenset(await self._load())
            except Exception as exc:  # noqa: BLE001 - the last good set stays; no origin is added
                log.warning("client_origins_unavailable", error=type(exc).__name__)
            self._loaded_at = time.monotonic()
