"""Cross-origin reads by browsers: the CORS protocol of the Fetch standard
(https://fetch.spec.whatwg.org/#http-cors-protocol), one mechanism for every service,
driven by data: each service says which of its paths belong to which class
(`CorsRules`), and the class says who may read them.

- `ANY_ORIGIN` (the discovery documents, the JWKS): `Access-Control-Allow-Origin: *`
  on every answer; the answer does not depend on the origin, so no `Vary`.
- `CLIENT_ORIGINS` (registration, token, revocation, UserInfo, the resource API): the
  request's own origin echoed when it is loopback (`http://localhost:*`,
  `http://127.0.0.1:*`, `http://[::1]:*`; RFC 8252 §7.3's native apps, a single-page
  app or an inspector served on this computer) or the origin of a redirect URI an
  administrator registered (`ClientOrigins`); every answer carries `Vary: Origin`
  (Fetch §3.2.6 "CORS protocol and HTTP caches"), since it depends on the origin.
- Any other path (pages, `/oauth/authorize`, `/internal`): nothing; the browser keeps
  the answer from other origins.

Never `Access-Control-Allow-Credentials` (Fetch §3.2.5 "CORS check": a request whose
credentials mode is "include" fails without it): no cookie of ours is usable from
another origin, and a client authenticates with what it sends itself. A CORS-preflight
request (Fetch §3.2.2: OPTIONS with `Origin` and `Access-Control-Request-Method`) to a
path of a class is answered here, 204, before the route: with the class's methods, the
request headers clients send (`Authorization`, `DPoP`, `Content-Type`) and a max age
when the origin may read, and without any `Access-Control-Allow-Origin` otherwise (the
browser then refuses the actual request, Fetch §4.8 "CORS-preflight fetch"). An OPTIONS
that is not a preflight goes on to the route (its `Allow`).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Set
from urllib.parse import urlsplit

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from .logging import get_logger
from .raw import first_header, send_answer

log = get_logger(__name__)

Headers = list[tuple[bytes, bytes]]

ALLOW_HEADERS = "Authorization, DPoP, Content-Type"  # what clients send beyond the safelisted ones
EXPOSE_HEADERS = "WWW-Authenticate, DPoP-Nonce"  # what they read beyond the safelisted ones
MAX_AGE = "600"  # seconds a browser may keep a preflight's answer (Chromium caps it at 7200)


class CorsClass(msgspec.Struct, frozen=True):
    """Who may read a class of paths from another origin, and with which methods."""

    any_origin: bool  # `*`; otherwise loopback and registered origins only
    methods: str  # Access-Control-Allow-Methods of a preflight's answer


ANY_ORIGIN = CorsClass(any_origin=True, methods="GET, HEAD")
CLIENT_ORIGINS = CorsClass(any_origin=False, methods="GET, HEAD, POST, PUT, DELETE")

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


class CorsRules:
    """A service's path classes: exact paths, then prefixes (the longest first);
    `registered(scope)` is the service's `ClientOrigins` (None: loopback only)."""

    def __init__(
        self,
        *,
        paths: Mapping[str, CorsClass] | None = None,
        prefixes: Mapping[str, CorsClass] | None = None,
        registered: Callable[[Scope], ClientOrigins | None] | None = None,
    ) -> None:
        self._paths = dict(paths or {})
        self._prefixes = sorted((prefixes or {}).items(), key=lambda item: len(item[0]), reverse=True)
        self._registered = registered

    def class_of(self, path: str) -> CorsClass | None:
        kind = self._paths.get(path)
        if kind is not None:
            return kind
        return next((kind for prefix, kind in self._prefixes if path.startswith(prefix)), None)

    async def may_read(self, kind: CorsClass, origin: str | None, scope: Scope) -> bool:
        if origin is None:
            return False
        if kind.any_origin or is_loopback_origin(origin):
            return True
        origins = self._registered(scope) if self._registered is not None else None
        return origins is not None and await origins.allows(origin)


def answer_headers(kind: CorsClass, origin: str | None) -> Headers:
    """An actual answer's CORS header fields (Fetch §3.2.3): `origin` is the request's
    origin when it may read, else None."""
    if kind.any_origin:
        return [(b"access-control-allow-origin", b"*")]
    headers: Headers = [(b"vary", b"Origin")]
    if origin is not None:
        headers += [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-expose-headers", EXPOSE_HEADERS.encode()),
        ]
    return headers


def preflight_headers(kind: CorsClass, origin: str | None) -> dict[str, str]:
    """A CORS-preflight answer's header fields (Fetch §3.2.3), `origin` as above."""
    headers = {} if kind.any_origin else {"Vary": "Origin"}
    if origin is not None:
        headers |= {
            "Access-Control-Allow-Origin": "*" if kind.any_origin else origin,
            "Access-Control-Allow-Methods": kind.methods,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": MAX_AGE,
        }
    return headers


def is_preflight(scope: Scope, origin: str | None) -> bool:
    """Fetch §3.2.2: OPTIONS with `Origin` and `Access-Control-Request-Method`."""
    return (
        scope["method"] == "OPTIONS"  # type: ignore[typeddict-item]
        and origin is not None
        and first_header(scope, b"access-control-request-method") is not None
    )


class CorsMiddleware:
    """`CorsRules` applied to a service's routes (common.web.service_app puts it in
    every service): preflights answered, actual answers given their header fields. The
    route's own `Access-Control-*` fields, if any, are replaced: this is the one place
    that decides."""

    def __init__(self, app: ASGIApp, rules: CorsRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = self.rules.class_of(scope["path"]) if scope["type"] == ScopeType.HTTP else None
        if kind is None:
            await self.app(scope, receive, send)
            return
        origin = first_header(scope, b"origin")
        allowed = origin if await self.rules.may_read(kind, origin, scope) else None
        if is_preflight(scope, origin):
            await send_answer(send, b"", preflight_headers(kind, allowed), status=204, media_type=None)
            return
        extra = answer_headers(kind, allowed)

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [h for h in message.get("headers", ()) if not h[0].lower().startswith(b"access-control-")]
                message["headers"] = [*kept, *extra]
            await send(message)

        await self.app(scope, receive, send_with_cors)
