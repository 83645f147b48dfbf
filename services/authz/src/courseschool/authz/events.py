"""Every audit event, kept: the event recorder hears each one (`common.logging.audit`),
classifies it (admin, user or security), and writes it to `authz_events` in batches from
a task of its own, so that no request waits for the record. Administrators' actions are
written before the action answers (`flush`). If the database cannot take them, events
wait in a bounded buffer; past its size the oldest are dropped, counted and logged (the
log line of each event was written all the same).

Not every event is kept one by one: what an anonymous caller can make happen at will,
concerning no one (a new unreachable metadata-document URL at /oauth/authorize, a failed
sign-in to an account that does not exist, a source locked out), is logged and counted
in /metrics (`courseschool_anonymous_events_total`), never stored nor sent to the
webhook, so that a flood of them costs no rows and holds back no real alert (issue 38,
T4-3). What concerns a person or a client the platform knows is kept, and names its
source address (`common.logging.audit` adds the request's).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
from typing import Any

import structlog

from courseschool.common.audit_events import ANONYMOUS_NOISE
from courseschool.common.audit_events import kind_of as catalogue_kind
from courseschool.common.background import STOP_GRACE, BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import listen_to_audit
from courseschool.common.metrics import ANONYMOUS_EVENTS

from .storage.events import EventRow, PgEventStore

log = structlog.get_logger("authz.events")

ADMIN_ACTORS = frozenset({"admin", "admin-cli"})
# Grants ended for a reason security must see (reuse, a password reset, a role change).
SECURITY_REASONS = frozenset({"code_reused", "refresh_reused", "password_reset", "role_changed", "user_disabled"})
_NOT_DETAILS = frozenset({"actor", "subject", "client_id", "ip", "source", "grant_id"})


def is_anonymous_noise(action: str, fields: dict[str, Any]) -> bool:
    """An event an anonymous caller can repeat at will that concerns no known person (the
    catalogue's `anonymous` ones, common/audit_events.py)."""
    return action in ANONYMOUS_NOISE and fields.get("subject") is None


def kind_of(action: str, fields: dict[str, Any]) -> str:
    """Security first (the catalogue's security events, and a grant an administrator's
    role change ended), then what an administrator did, then the catalogue's kind."""
    kind = catalogue_kind(action)
    if kind == "security" or fields.get("reason") in SECURITY_REASONS:
        return "security"
    if fields.get("actor") in ADMIN_ACTORS:
        return "admin"
    return kind


def event_row(action: str, fields: dict[str, Any], at: dt.datetime) -> EventRow:
    source = fields.get("ip") or fields.get("source")
    grant_id = fields.get("grant_id")
    details = {k: v for k, v in fields.items() if k not in _NOT_DETAILS and v is not None}
    if grant_id is not None:
        details["grant_id"] = grant_id
    return EventRow(
        at=at,
        kind=kind_of(action, fields),
        action=action,
        actor=str(fields.get("actor") or "system"),
        source=str(source) if source is not None else None,
        subject=str(fields["subject"]) if fields.get("subject") is not None else None,
        client_id=str(fields["client_id"]) if fields.get("client_id") is not None else None,
        grant_id=str(grant_id) if grant_id is not None else None,
        details=details,
    )


class EventRecorder(BackgroundLoop):
    """Keeps what the audit log says and writes it to the event store in batches."""

    name = "event_recorder"

    def __init__(
        self, store: PgEventStore, clock: Clock, *, capacity: int = 10_000, batch: int = 500, interval: float = 0.5
    ) -> None:
        self._store = store
        self._clock = clock
        self._buffer: collections.deque[EventRow] = collections.deque(maxlen=capacity)
        self._batch = batch
        self._interval = interval
        self._wake = asyncio.Event()
        self._writing = asyncio.Lock()  # one batch at a time: a row is written once
        self._stop_listening: Any = None
        self.dropped = 0
        super().__init__()

    def hear(self, action: str, fields: dict[str, Any]) -> None:
        """The audit listener: keep the event for the next batch (never blocks); an
        anonymous caller's noise is only counted."""
        if is_anonymous_noise(action, fields):
            ANONYMOUS_EVENTS.labels(action).inc()
            return
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped += 1
            log.warning("audit_event_dropped", action=action, buffered=len(self._buffer))
        self._buffer.append(event_row(action, fields, dt.datetime.fromtimestamp(self._clock.now(), dt.UTC)))
        if len(self._buffer) >= self._batch:
            self._wake.set()

    def start(self) -> None:
        self._stop_listening = listen_to_audit(self.hear)
        super().start()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        if self._stop_listening is not None:
            self._stop_listening()
        stopped = await super().stop(grace)
        with contextlib.suppress(Exception):  # a database gone at shutdown: the log lines remain
            async with asyncio.timeout(grace):
                await self.flush()
        return stopped

    async def flush(self) -> None:
        """Write everything heard so far (raises if the database cannot take it; the
        events stay buffered for the next try)."""
        async with self._writing:
            while self._buffer:
                rows = [self._buffer[i] for i in range(min(self._batch, len(self._buffer)))]
                await self._store.insert(rows)
                for _ in rows:
                    self._buffer.popleft()

    async def _run(self) -> None:
        while not self.stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._interval)
            self._wake.clear()
            try:
                await self.flush()
            except Exception as exc:  # noqa: BLE001  the database is away: keep them, try again
                log.warning("audit_events_not_written", error=type(exc).__name__, buffered=len(self._buffer))
                await asyncio.sleep(self._interval)
