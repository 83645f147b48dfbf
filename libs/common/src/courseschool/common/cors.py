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

from collections.abc import Callable, Mapping

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from .logging import get_logger
from .origins import ClientOrigins, is_loopback_origin
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
