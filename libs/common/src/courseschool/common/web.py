"""The web pieces every service shares: the app factory, request ids, health, the
public documents, JSON answers. Errors are answered in `answers.py`; no handler of ours
catches and renders errors itself."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, cast

import msgspec
import structlog
from litestar import Litestar, Response, get
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.handlers import BaseRouteHandler
from litestar.types import (
    ASGIApp,
    Guard,
    HTTPScope,
    Message,
    Receive,
    Scope,
    Send,
)
from prometheus_client import CONTENT_TYPE_LATEST

from .answers import NO_STORE, answer_error
from .cors import CorsMiddleware, CorsRules, Headers, answer_headers
from .dpop import ProofTarget
from .errors import NotFoundError
from .forwarded import ProxyHeadersMiddleware
from .health import ReadyCheck, health_handlers
from .http import Held
from .logging import bind_request_source, request_line, reset_request_source
from .metrics import exposition, record_request
from .raw import client_address, first_header, header_values, send_document
from .secrets import same

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
REQUEST_ID_HEADER = "x-request-id"


class RequestMiddleware:
    """What every request gets, in one layer (each layer is paid on every request, see
    bench/RESULTS.md): `handled` below."""

    def __init__(self, app: ASGIApp, service: str) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        await handled(self.service, scope, send, lambda answer: self.app(scope, receive, answer))


async def handled(service: str, scope: HTTPScope, send: Send, respond: Callable[[Send], Awaitable[None]]) -> None:
    """`respond(send)` with what every HTTP request gets: a request id (the caller's
    `X-Request-ID` if well-formed, else a new one) bound to the log context and echoed
    on the response, the caller's address bound for the audit events, one log line,
    and the Prometheus count and latency by route template."""
    request_id = first_header(scope, b"x-request-id") or ""
    if not _REQUEST_ID.match(request_id):
        request_id = os.urandom(16).hex()
    echo = (b"x-request-id", request_id.encode())
    # Bound for this request, restored after it: an in-process call to another app
    # (the all-in-one platform) must not clear its caller's context.
    bound = structlog.contextvars.bind_contextvars(request_id=request_id)
    source = bind_request_source(client_address(scope))  # every audit event names its caller
    started = time.perf_counter()
    status = 500

    async def send_with_id(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            message["headers"] = [*message.get("headers", ()), echo]
        await send(message)

    try:
        await respond(send_with_id)
    finally:
        seconds = time.perf_counter() - started
        record_request(service, scope.get("path_template") or "unrouted", scope["method"], status, seconds)
        if _requests_logged():
            request_line(method=scope["method"], path=scope["path"], status=status, ms=round(seconds * 1000, 2))
        structlog.contextvars.reset_contextvars(**bound)
        reset_request_source(source)


def _requests_logged() -> bool:
    # The root logger carries the configured level (logging.configure_logging); asking
    # it is cheaper than building a structlog logger only to drop the event.
    return logging.getLogger().isEnabledFor(logging.INFO)


# What an app holds at a path now; None: nothing held (the app's own route answers).
HeldLookup = Callable[[], Held | None]
_READS = ("GET", "HEAD")


class HeldDocuments:
    """The public documents every client and resource server fetches (JWKS, the
    well-known metadata), answered in front of everything else: a GET or HEAD of a path
    an app holds a document for, written exactly as that path, gets the document
    (`send_document`) inside `handled`, so with the same request id, log line and
    metrics as any request. What it skips is work that cannot change the answer: the
    all-in-one's path router, the proxy headers (no one reads the client's address
    here), the framework's routing and its error layer; what that saves a JWKS request
    is measured in bench/RESULTS.md. Anything
    else, or a document the app does not hold right now, goes on to `app` unchanged,
    and the app's own route for the same path answers from the same lookup. A held
    path's CORS class (the app's `CorsRules`) must not depend on the origin: nothing
    here reads the request's."""

    def __init__(self, app: ASGIApp, apps: Iterable[object]) -> None:
        self.app = app
        self._held: dict[str, tuple[bytes, str, HeldLookup, Headers]] = {}
        for held_by in apps:  # our services' Litestar apps; anything else holds nothing
            state = getattr(held_by, "state", None)
            if state is None:
                continue
            service = state["service_name"]
            rules: CorsRules | None = state.get("cors")
            for path, lookup in state.get("held_documents", {}).items():
                if path in self._held:
                    raise ValueError(f"two apps hold a document at {path}")
                kind = rules.class_of(path) if rules is not None else None
                if kind is not None and not kind.any_origin:
                    raise ValueError(f"the document at {path} is held, but who may read it depends on the origin")
                cors = answer_headers(kind, None) if kind is not None else []
                self._held[path] = (path.encode("latin-1"), service, lookup, cors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope["method"] in _READS:
            path = scope["path"]
            entry = self._held.get(path)
            # Only the path as written: an encoded form of it goes the whole way (the
            # router refuses what it could read in two ways).
            if entry is not None and (scope.get("raw_path") or entry[0]).partition(b"?")[0] == entry[0]:
                document = entry[2]()
                if document is not None:
                    scope["path_template"] = path
                    await handled(
                        entry[1], scope, send, lambda answer: send_document(scope, answer, document, extra=entry[3])
                    )
                    return
        await self.app(scope, receive, send)


def server_app(app: ASGIApp, apps: Iterable[object], forwarded_allow_ips: str) -> ASGIApp:
    """What a server runs: the held documents in front (`HeldDocuments`), then the
    client's address from a trusted proxy's headers (`forwarded.py`), then `app` (one
    service, or the all-in-one's router over `apps`)."""
    return HeldDocuments(ProxyHeadersMiddleware(app, forwarded_allow_ips), apps)


def current_request_id() -> str | None:
    return structlog.contextvars.get_contextvars().get("request_id")


async def forward_request_id(request: Any) -> None:
    """An httpx request hook: calls between services carry the caller's request id."""
    request_id = current_request_id()
    if request_id and REQUEST_ID_HEADER not in request.headers:
        request.headers[REQUEST_ID_HEADER] = request_id


@get("/metrics", include_in_schema=False, sync_to_thread=False)
def metrics() -> Response[bytes]:
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


def service_app(
    service: str,
    *,
    route_handlers: list[Any],
    ready_checks: dict[str, ReadyCheck],
    held: Mapping[str, HeldLookup] | None = None,
    cors: CorsRules | None = None,
    **options: Any,
) -> Litestar:
    """A Litestar app with what every service has: the error rendering, request ids,
    metrics, /healthz, /readyz and /metrics, and no logging set-up of Litestar's own.
    `held`: the public documents it offers to `HeldDocuments`, by path (its own routes
    for those paths answer from the same lookups). `cors`: which of its paths other
    origins may read (cors.py; none without it)."""
    from litestar.datastructures import State
    from litestar.middleware import DefineMiddleware

    return Litestar(
        route_handlers=[*route_handlers, *health_handlers(ready_checks), metrics],
        exception_handlers={Exception: answer_error},
        openapi_config=None,  # the one description is the discovery service's /openapi.json
        middleware=[
            DefineMiddleware(RequestMiddleware, service=service),
            DefineMiddleware(CorsMiddleware, rules=cors or CorsRules()),
        ],
        logging_config=None,
        state=State({"service_name": service, "held_documents": dict(held or {}), "cors": cors}),
        **options,
    )


def json_response(body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json", headers=headers or {})


def no_store_json(body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    """A JSON answer that must not be cached (tokens, credentials, per-caller data)."""
    return json_response(body, status=status, headers={**NO_STORE, **(headers or {})})


def proof_target(scope: Scope, base_url: str) -> ProofTarget:
    """What a DPoP proof sent with this request must match (RFC 9449 §4.3): the method,
    the URI as the client addressed it (the public origin and the path as sent; the
    query does not count), and every `DPoP` header field."""
    http = cast(HTTPScope, scope)
    raw = http.get("raw_path")
    path = raw.decode("latin-1") if raw else http["path"]
    return ProofTarget(method=http["method"], url=base_url + path, proofs=tuple(header_values(scope, b"dpop")))


def check_internal(connection: ASGIConnection[Any, Any, Any, Any], expected: str | None) -> None:
    """`/internal/*`: only for the other services, with the shared INTERNAL_TOKEN; for
    anyone else the path does not exist (compared in constant time). A request, or the
    connection a route guard is given."""
    if not expected or not same(connection.headers.get("authorization", ""), f"Bearer {expected}"):
        raise NotFoundError("not found")


def internal_only(expected: str | None) -> Guard:
    """`check_internal` as a Litestar guard, for a router of `/internal` routes: it runs
    before anything of the route (its dependencies, its parameters), and no handler
    under the router can forget it."""

    # async: Litestar runs a synchronous guard in a worker thread, a hop this check does not need
    async def internal_caller(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        check_internal(connection, expected)

    return internal_caller
