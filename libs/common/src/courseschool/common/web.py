"""The web pieces every service shares: error rendering, request ids, health.

This is the only module of the shared lib that knows Litestar. Errors of every kind
are rendered here, in one place, as the JSON shape of RFC 6749 §5.2; no handler of
ours catches and renders errors itself.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
import redis.exceptions
import structlog
from litestar import Litestar, Request, Response, get
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from .errors import OAuthError, ServerError, TemporarilyUnavailableError
from .logging import get_logger
from .metrics import ERRORS

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


class RequestIdMiddleware:
    """Bind a request id (the caller's `X-Request-ID` if well-formed, else a new one)
    to the log context, echo it on the response, and log one line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = ""
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                incoming = value.decode("latin-1")
                break
        request_id = incoming if _REQUEST_ID.match(incoming) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            log.info(
                "request_handled", method=scope["method"], path=scope["path"], status=status,
                ms=round((time.perf_counter() - started) * 1000, 2),
            )


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

    from .metrics import MetricsMiddleware, metrics

    return Litestar(
        route_handlers=[*route_handlers, *health_handlers(ready_checks), metrics],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[RequestIdMiddleware, DefineMiddleware(MetricsMiddleware, service=service)],
        logging_config=None,
        state=State({"service_name": service}),
        **options,
    )
