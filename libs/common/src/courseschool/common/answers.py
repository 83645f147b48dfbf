"""How every error is answered, decided in one place.

Whatever a handler raises ends here, as Litestar's one exception handler:
- a `RedirectError` (an OAuth error after the client's redirect URI was validated)
  sends the browser back to the client with `error`, `state` and `iss`;
- on a route that serves pages to a person (`opt={"answer": "page"}`), an HTML page;
- everywhere else, JSON `{"error", "error_description"}` (RFC 6749 §5.2).

Errors of the framework (unknown path, wrong method, malformed parameters), a backing
service that cannot be reached or refuses to serve (503 with Retry-After) and anything
unexpected (500, logged with its traceback) get the same shapes. An error's `detail`
goes to the log, never out.
"""

from __future__ import annotations

import socket
from typing import Any, Protocol

import asyncpg
import msgspec
import redis.exceptions
from litestar import Request, Response
from litestar.exceptions import HTTPException

from .errors import (
    AccessDeniedError,
    ConflictError,
    InvalidRequestError,
    InvalidTokenError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    PlatformError,
    RedirectError,
    ServerError,
    TemporarilyUnavailableError,
    UnsupportedMediaTypeError,
    fit_description,
)
from .logging import get_logger
from .metrics import ERRORS

log = get_logger(__name__)

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
PAGE = {"answer": "page"}  # the `opt` of a route whose errors are pages

# A backing service that cannot be reached right now: the drivers' connection-level
# errors (a server out of reach, shutting down or crashed, a connection left in a
# broken state by one: asyncpg's InternalClientError) and a dropped connection. The
# pool raises failures to connect as asyncpg's own (db.py); an OSError that is not a
# connection's (a file not found, a permission denied) is a bug: 500. A write refused as
# read-only is a server that no longer takes writes (a primary demoted or fenced during a
# failover, a standby reached): the pool drops its connections to find the new primary
# (db.py), and the request is answered as in any other outage.
UNAVAILABLE: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.ReadOnlySQLTransactionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionError,
    TimeoutError,
    socket.gaierror,
)

# A Redis server that answers but refuses the command: out of memory under `noeviction`
# (OOM), a replica (READONLY), writes stopped after a failed save (MISCONF), a script
# error, a cluster that is down. The server is up but cannot do our work right now, as
# when it cannot be reached: 503, not a crash. redis-py raises these as ResponseError
# and its subclasses (OutOfMemoryError, ReadOnlyError, NoScriptError, ...).
REFUSED: tuple[type[BaseException], ...] = (redis.exceptions.ResponseError,)

_BY_STATUS: dict[int, type[PlatformError]] = {
    400: InvalidRequestError,
    401: InvalidTokenError,
    403: AccessDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaTypeError,
    503: TemporarilyUnavailableError,
}


class Pages(Protocol):
    """What a service that shows pages to people provides (set as `app.state.pages`)."""

    issuer: str

    def error_page(self, err: PlatformError) -> Response[Any]: ...

    def redirect(self, location: str) -> Response[Any]: ...


def json_error(err: PlatformError) -> Response[bytes]:
    return Response(
        msgspec.json.encode(err.body()),
        status_code=err.status_code,
        media_type="application/json",
        headers={**NO_STORE, **err.headers},
    )


def answer_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Litestar's exception handler for every exception of every service."""
    pages: Pages | None = getattr(request.app.state, "pages", None)
    if isinstance(exc, RedirectError) and pages is not None:
        _count(request, exc.error)
        _log_refusal(request, exc.error)
        return pages.redirect(exc.location(pages.issuer))
    err = as_platform_error(request, exc)
    _count(request, err)
    if pages is not None and request.scope.get("route_handler") is not None and _wants_page(request):
        return pages.error_page(err)
    return json_error(err)


def as_platform_error(request: Request[Any, Any, Any], exc: Exception) -> PlatformError:
    if isinstance(exc, PlatformError):
        _log_refusal(request, exc)
        return exc
    if isinstance(exc, RedirectError):  # a service without pages: the error as JSON
        return exc.error
    if isinstance(exc, HTTPException):
        return _from_framework(request, exc)
    if isinstance(exc, UNAVAILABLE):
        log.warning("dependency_unavailable", path=request.url.path, error=type(exc).__name__)
        return _unavailable()
    if isinstance(exc, REFUSED):
        # The class names the refusal redis-py knows (OutOfMemoryError, ReadOnlyError); the
        # others keep Redis's error code as their first word (MISCONF, ERR, ...). The rest
        # of a reply may quote our command's arguments: never logged.
        first = str(exc).split(" ", 1)[0][:32]
        code = first if first.isupper() else None
        log.warning("dependency_refused", path=request.url.path, error=type(exc).__name__, redis_error=code)
        return _unavailable()
    log.error("request_crashed", path=request.url.path, error=type(exc).__name__, exc_info=exc)
    return ServerError("the server could not complete the request")


def _unavailable() -> PlatformError:
    err = TemporarilyUnavailableError("a backing service is unavailable; try again shortly")
    err.headers["Retry-After"] = "1"
    return err


def _from_framework(request: Request[Any, Any, Any], exc: HTTPException) -> PlatformError:
    kind = _BY_STATUS.get(exc.status_code, InvalidRequestError if exc.status_code < 500 else ServerError)
    if exc.status_code >= 500:
        log.error("request_failed", path=request.url.path, status=exc.status_code)
        err = kind("the server could not complete the request")
    else:
        # Litestar's messages name the parameter at fault; they hold no secret.
        err = kind(fit_description(str(exc.detail or "")[:300]))
    err.status_code = exc.status_code
    err.headers.update(exc.headers or {})
    return err


def _wants_page(request: Request[Any, Any, Any]) -> bool:
    return request.route_handler.opt.get("answer") == "page"


def _count(request: Request[Any, Any, Any], err: PlatformError) -> None:
    ERRORS.labels(getattr(request.app.state, "service_name", "unknown"), err.error).inc()


def _log_refusal(request: Request[Any, Any, Any], err: PlatformError) -> None:
    if err.detail:
        log.info("request_refused", path=request.url.path, error=err.error, detail=err.detail)
