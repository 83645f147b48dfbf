"""The web pieces every service shares: error rendering, request ids, health.

This is the only module of the shared lib that knows Litestar. Errors of every kind
are rendered here, in one place, as the JSON shape of RFC 6749 §5.2; no handler of
ours catches and renders errors itself.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
import redis.exceptions
import structlog
from litestar import Litestar, Request, Response, get
from litestar.exceptions import HTTPException, MethodNotAllowedException
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from .errors import OAuthError, ServerError, TemporarilyUnavailableError
from .http import none_match
from .logging import get_logger, request_line
from .metrics import ERRORS, record_request

log = get_logger(__name__)

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}

_HTTP_ERROR_CODES = {
    400: "invalid_request",
    401: "invalid_token",
    403: "access_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "request_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    503: "temporarily_unavailable",
}


def error_response(err: OAuthError) -> Response[bytes]:
    headers = {**NO_STORE, **err.headers}
    return Response(
        msgspec.json.encode(err.body()), status_code=err.status_code,
        media_type="application/json", headers=headers,
    )


def _service_of(request: Request) -> str:
    return getattr(request.app.state, "service_name", "unknown")


def _oauth_error_handler(request: Request, exc: OAuthError) -> Response[bytes]:
    ERRORS.labels(_service_of(request), exc.error).inc()
    return error_response(exc)


def _http_error_handler(request: Request, exc: HTTPException) -> Response[bytes]:
    code = _HTTP_ERROR_CODES.get(exc.status_code, "invalid_request" if exc.status_code < 500 else "server_error")
    ERRORS.labels(_service_of(request), code).inc()
    err = OAuthError(_safe_detail(exc))
    err.error = code  # type: ignore[misc]
    err.status_code = exc.status_code  # type: ignore[misc]
    if exc.headers:
        err.headers.update(exc.headers)
    if exc.status_code >= 500:
        log.error("request_failed", path=request.url.path, status=exc.status_code)
    return error_response(err)


def _safe_detail(exc: HTTPException) -> str:
    detail = str(exc.detail or "")
    if exc.status_code >= 500:
        return "the server could not complete the request"
    # Litestar's validation messages name the parameter; they hold no secrets.
    return detail[:300]


def _unavailable_handler(request: Request, exc: Exception) -> Response[bytes]:
    log.warning("dependency_unavailable", path=request.url.path, error=type(exc).__name__)
    err = TemporarilyUnavailableError("a backing service is unavailable; try again shortly")
    err.headers["Retry-After"] = "1"
    return error_response(err)


def _unexpected_handler(request: Request, exc: Exception) -> Response[bytes]:
    log.exception("request_crashed", path=request.url.path, error=type(exc).__name__)
    return error_response(ServerError("the server could not complete the request"))


EXCEPTION_HANDLERS: dict[Any, Callable[..., Response[bytes]]] = {
    OAuthError: _oauth_error_handler,
    HTTPException: _http_error_handler,
    asyncpg.PostgresConnectionError: _unavailable_handler,
    asyncpg.exceptions.CannotConnectNowError: _unavailable_handler,
    asyncpg.exceptions.OperatorInterventionError: _unavailable_handler,
    asyncpg.InterfaceError: _unavailable_handler,
    ConnectionError: _unavailable_handler,
    OSError: _unavailable_handler,
    TimeoutError: _unavailable_handler,
    redis.exceptions.ConnectionError: _unavailable_handler,
    redis.exceptions.TimeoutError: _unavailable_handler,
    Exception: _unexpected_handler,
}

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
REQUEST_ID_HEADER = "x-request-id"


class RequestMiddleware:
    """What every request gets, in one layer (each layer is paid on every request, see
    bench/RESULTS.md): a request id (the caller's `X-Request-ID` if well-formed, else a
    new one) bound to the log context and echoed on the response, one log line, and the
    Prometheus count and latency by route template."""

    def __init__(self, app: ASGIApp, service: str) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = ""
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                request_id = value.decode("latin-1")
                break
        if not _REQUEST_ID.match(request_id):
            request_id = os.urandom(16).hex()
        echo = (b"x-request-id", request_id.encode())
        # Bound for this request, restored after it: an in-process call to another app
        # (the all-in-one platform) must not clear its caller's context.
        bound = structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echo]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            record_request(self.service, scope.get("path_template") or "unrouted", scope["method"], status, seconds)
            if _requests_logged():
                request_line(method=scope["method"], path=scope["path"], status=status, ms=round(seconds * 1000, 2))
            structlog.contextvars.reset_contextvars(**bound)


def _requests_logged() -> bool:
    # The root logger carries the configured level (logging.configure_logging); asking
    # it is cheaper than building a structlog logger only to drop the event.
    return logging.getLogger().isEnabledFor(logging.INFO)


async def send_document(
    scope: Scope, send: Send, body: bytes, etag: str, media_type: str, cache_control: str = "public, max-age=300"
) -> None:
    """Answer a GET or HEAD with pre-serialised bytes, honouring If-None-Match (RFC 9110
    §13.1.2) with a 304. For the public documents every client fetches (discovery,
    JWKS): as a raw ASGI handler it skips the framework's per-request parameter and
    response machinery, and still passes the routing, errors and RequestMiddleware."""
    if scope["method"] not in ("GET", "HEAD"):
        raise MethodNotAllowedException(headers={"Allow": "GET, HEAD"})
    tag = etag.encode()
    headers = [(b"etag", tag), (b"cache-control", cache_control.encode()), (b"access-control-allow-origin", b"*")]
    condition = next((value for name, value in scope["headers"] if name == b"if-none-match"), None)
    if condition is not None and none_match(condition, tag):
        await send({"type": "http.response.start", "status": 304, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    headers += [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def current_request_id() -> str | None:
    return structlog.contextvars.get_contextvars().get("request_id")


async def forward_request_id(request: Any) -> None:
    """An httpx request hook: calls between services carry the caller's request id."""
    request_id = current_request_id()
    if request_id and REQUEST_ID_HEADER not in request.headers:
        request.headers[REQUEST_ID_HEADER] = request_id


ReadyCheck = Callable[[], Awaitable[None]]


def health_handlers(checks: dict[str, ReadyCheck]) -> list[Any]:
    """`/healthz`: the process is alive. `/readyz`: every dependency answers."""

    @get("/healthz", include_in_schema=False)
    async def healthz() -> Response[bytes]:
        return Response(b'{"status":"ok"}', media_type="application/json", headers=NO_STORE)

    @get("/readyz", include_in_schema=False)
    async def readyz() -> Response[bytes]:
        results: dict[str, str] = {}
        for name, check in checks.items():
            try:
                await check()
                results[name] = "ok"
            except Exception as exc:  # any failure means not ready
                results[name] = f"unavailable: {type(exc).__name__}"
        ready = all(v == "ok" for v in results.values())
        body = msgspec.json.encode({"status": "ok" if ready else "unavailable", "checks": results})
        return Response(body, status_code=200 if ready else 503, media_type="application/json", headers=NO_STORE)

    return [healthz, readyz]


def service_app(
    service: str, *, route_handlers: list[Any], ready_checks: dict[str, ReadyCheck], **options: Any
) -> Litestar:
    """A Litestar app with what every service has: the error rendering, request ids,
    metrics, /healthz, /readyz and /metrics, and no logging set-up of Litestar's own."""
    from litestar.datastructures import State
    from litestar.middleware import DefineMiddleware

    from .metrics import metrics

    return Litestar(
        route_handlers=[*route_handlers, *health_handlers(ready_checks), metrics],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[DefineMiddleware(RequestMiddleware, service=service)],
        logging_config=None,
        state=State({"service_name": service}),
        **options,
    )
