"""structlog set-up: JSON lines, or pretty output when LOG_FORMAT says `console` (or
`auto` and the stream is a terminal); the standard library's records (granian, asyncpg,
httpx) get the same format.

Each record is written to the stream (standard error unless `configure_logging` is
given one) whole, newline included, in one write: the workers of a server share that
stream, and a record written in two parts could be split by another's (one line
holding two records).

A request id is bound per request (`web.handled`, run by `web.RequestMiddleware`)
through contextvars, so every event of a request carries it. The one line per request
(`request_line`) skips structlog's processor chain in JSON format. Audit events
(`audit`) are logged whatever LOG_LEVEL says, counted, and handed to the listeners
registered with `listen_to_audit` (the authorization server's event store). An audit
event made while a request is served names the caller's address (`ip`) when its call
did not name one (`request_source`, bound by `web.handled` next to the request id), so
every event a request caused carries where it came from.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, MutableMapping
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any, TextIO

import msgspec
import structlog
from structlog.typing import Processor

from .audit_events import AuditEvent
from .metrics import count_audit_event

REDACTED_KEYS = frozenset(
    {
        "password",
        "client_secret",
        "code",
        "code_verifier",
        "refresh_token",
        "access_token",
        "id_token",
        "token",
        "authorization",
        "cookie",
        "secret",
    }
)


def _redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Last line of defence: a secret-looking key never reaches the output."""
    for key in list(event):
        if key.lower() in REDACTED_KEYS:
            event[key] = "[redacted]"
    return event


_encoder = msgspec.json.Encoder(enc_hook=str)  # anything not JSON by nature is logged as its str()


def _json(event: dict, **_: object) -> str:
    """One JSON line per event, with msgspec: cheaper than the standard library's json,
    and paid on every request (bench/RESULTS.md, "Where the time goes")."""
    return _encoder.encode(event).decode()


# Where request lines go straight as JSON (set by configure_logging; None: through structlog).
_request_stream: TextIO | None = None


def configure_logging(level: str = "info", fmt: str = "auto", stream: TextIO | None = None) -> None:
    """`stream`: where the records go (standard error unless given: a command's log file)."""
    global _request_stream
    out = stream or sys.stderr
    use_console = fmt == "console" or (fmt == "auto" and out.isatty())
    _request_stream = None if use_console else out
    renderer = structlog.dev.ConsoleRenderer() if use_console else structlog.processors.JSONRenderer(serializer=_json)
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact,
    ]
    # Records of the standard library (granian, uvicorn, asyncpg, httpx) get the same format.
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
    for noisy in ("httpx", "pgserver"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        # One write per record, the newline included: `print` (PrintLogger) writes the
        # record and its newline apart, and with unbuffered output (PYTHONUNBUFFERED, as
        # the image and the tests run) another worker's record could land between them.
        logger_factory=structlog.WriteLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    # Quiet the access log of uvicorn; our middleware logs requests with their id.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)


def request_line(**fields: object) -> None:
    """The one line logged per request (`request_handled`), the most frequent event by
    far. In JSON format it is written directly: the same fields as structlog gives it
    (the context's request id, level, ISO timestamp), at a fraction of the processor
    chain's cost (bench/layers.py; bench/RESULTS.md). Its fields are fixed and hold no
    secret (in JSON format nothing redacts them)."""
    stream = _request_stream
    if stream is None:
        structlog.get_logger("courseschool.request").info("request_handled", **fields)
        return
    event = structlog.contextvars.get_contextvars()
    event.update(fields)
    event.update(event="request_handled", level="info", timestamp=datetime.now(UTC).isoformat().replace("+00:00", "Z"))
    stream.write(_encoder.encode(event).decode() + "\n")
    stream.flush()


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)


# Audit events are written whatever LOG_LEVEL says (the admin CLI runs at warning level,
# and its actions must still be on record).
_AUDIT_LEVEL = structlog.make_filtering_bound_logger(logging.INFO)


def _audit_logger() -> Any:
    config = structlog.get_config()
    return structlog.wrap_logger(
        config["logger_factory"](),
        processors=config["processors"],
        wrapper_class=_AUDIT_LEVEL,
        context_class=config["context_class"],
        logger_name="audit",
    )


AuditListener = Callable[[str, dict[str, Any]], None]

# Who hears every audit event besides the log: the authorization server's event store
# (authz/events.py) while its app runs. Process-wide, as the logging set-up itself is.
_listeners: list[AuditListener] = []


def listen_to_audit(listener: AuditListener) -> Callable[[], None]:
    """Hand every audit event from now on to `listener` (it must not block: it is called
    in the request); returns the call that stops it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


# The caller's address of the request being served (None: no request, such as a
# background task or the admin CLI, which names its own source).
_request_source: ContextVar[str | None] = ContextVar("request_source", default=None)


def bind_request_source(address: str) -> Token[str | None]:
    """Name the caller's address for the audit events of this request (`web.handled`);
    the token resets it after the request."""
    return _request_source.set(address)


def reset_request_source(token: Token[str | None]) -> None:
    _request_source.reset(token)


def audit(
    event: AuditEvent, *, actor: str, subject: str | None = None, client_id: str | None = None, **fields: object
) -> None:
    """A security or administration event: who did what to whom, through which client.
    `event` is a name of the catalogue (audit_events.py: its kind, webhook, meaning).
    The request id is added from the context, and the caller's address (`ip`) when the
    call names neither `ip` nor `source`. Never pass a secret here. Logged as it is (an
    operator's SIEM reads the lines) and handed to the listeners (the event store)."""
    if fields.get("ip") is None and fields.get("source") is None:
        fields.pop("ip", None)
        fields.pop("source", None)
        address = _request_source.get()
        if address is not None:
            fields["ip"] = address
    _audit_logger().info(event, audit=True, actor=actor, subject=subject, client_id=client_id, **fields)
    count_audit_event(event, {"actor": actor, **fields})
    for listener in tuple(_listeners):
        listener(event, {"actor": actor, "subject": subject, "client_id": client_id, **fields})
