"""Security events and new connections, told to an operator's HTTPS webhook
(EVENTS_WEBHOOK_URL), so that a deployment can send the e-mail or page the on-call
engineer with the tools it already runs.

The event store puts each such event in `authz_webhook_outbox` in the statement that
records it; this task delivers from there, so no request ever waits for a receiver. Each
delivery belongs to a stream (the person the event concerns, else the client) and
carries its number there; only the oldest delivery of a stream still to go is claimed,
security events before new connections (storage/webhook_outbox.py). Up to PARALLEL are
sent at once, each the head of its own stream: a receiver that refuses one person's
delivery, or answers slowly, holds back no other stream, and a flood of connections no
security event (issue 38, T4-3). A delivery is claimed alone (its next attempt pushed a
lease ahead, other replicas skip it), then sent once with a time limit. The lease is
longer than the send can take (twice EVENTS_WEBHOOK_TIMEOUT, the whole send's hard
limit, plus a minute for the database): a lease that had to cover a whole batch ran out
while the batch was still being sent, and another replica sent the rest again (issue
38, T4-4). A 2xx marks it delivered and it is never sent again; anything else is tried
again later with a doubling delay, up to EVENTS_WEBHOOK_MAX_ATTEMPTS, then abandoned
and logged (and the stream's next delivery goes). A crash between a receiver's 2xx and
the mark can send one delivery twice: receivers dedupe on `X-Course-School-Delivery`.
The backlog (pending, retrying, abandoned, the oldest pending event's wait) is sampled
into /metrics (CourseSchoolWebhookBacklog, CourseSchoolWebhookAbandoned).

Each request is signed: `X-Course-School-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
"<t>.<body>" with EVENTS_WEBHOOK_SECRET>`; a receiver recomputes it and refuses an old t.

The outbox is the one table on PostgreSQL's clock (docs/design.md, "One clock"): its
moments are a delivery's lease and retry delays, written and compared by `now()` alone,
in the same statements, and never compared with a moment the application's clock wrote.
The signature's `t` is the application's time, as every time a receiver reads.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ssl
import time
from typing import Any

import asyncpg
import httpx
import msgspec

from courseschool.common.background import STOP_GRACE, BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import get_logger
from courseschool.common.metrics import WEBHOOK_OLDEST, WEBHOOK_OUTBOX, WEBHOOK_SENDS
from courseschool.common.outbound import default_tls

from .settings import AuthzSettings
from .storage.webhook_outbox import Claimed, PgWebhookOutbox

log = get_logger(__name__)

SIGNATURE_HEADER = "X-Course-School-Signature"
DELIVERY_HEADER = "X-Course-School-Delivery"
LEASE_SECONDS = 60  # beyond the send's own limit: the statements around it
MAX_DELAY = 3600
PARALLEL = 4  # sends under way at once, each the head of a stream of its own
SAMPLE_EVERY = 15.0  # seconds between two samples of the backlog for /metrics


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def retry_delay(attempts: int) -> int:
    """Seconds before the next try after `attempts` failed ones: 2, 4, 8 ... an hour."""
    return int(min(MAX_DELAY, 2 ** max(1, attempts)))


class WebhookDelivery(BackgroundLoop):
    """Sends the outbox's events to the operator's webhook, signed, retrying with backoff."""

    name = "webhook_delivery"

    def __init__(self, settings: AuthzSettings, pool: asyncpg.Pool, clock: Clock, *, batch: int = 20) -> None:
        assert settings.events_webhook_url and settings.events_webhook_secret
        self._url = settings.events_webhook_url
        self._secret = settings.events_webhook_secret
        self._max_attempts = settings.events_webhook_max_attempts
        self._interval = settings.events_webhook_interval
        self._send_limit = 2 * settings.events_webhook_timeout  # httpx's timeout is per phase; this is the whole
        self._outbox = PgWebhookOutbox(pool)
        self._clock = clock
        self._sampled = 0.0
        self._batch = batch
        verify = default_tls(trust_env=False)
        if settings.events_webhook_ca_bundle:
            verify = ssl.create_default_context(cafile=settings.events_webhook_ca_bundle)
        self._http = httpx.AsyncClient(
            timeout=settings.events_webhook_timeout, verify=verify, follow_redirects=False, trust_env=False
        )
        super().__init__()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        stopped = await super().stop(grace)
        await self._http.aclose()
        return stopped

    async def deliver_due(self) -> int:
        """One pass: send what is due, at most a batch, up to PARALLEL at once (heads of
        distinct streams: storage/webhook_outbox.py); how many were delivered."""
        delivered = tried = 0
        lease = float(self._send_limit + LEASE_SECONDS)
        while tried < self._batch and not self.stopping:
            claimed: list[Claimed] = []
            while len(claimed) < min(PARALLEL, self._batch - tried):
                delivery = await self._outbox.claim(lease)
                if delivery is None:
                    break
                claimed.append(delivery)
            if not claimed:
                break
            tried += len(claimed)
            delivered += sum(await asyncio.gather(*(self._deliver(d) for d in claimed)))
        return delivered

    async def _deliver(self, delivery: Claimed) -> bool:
        """Send one claimed delivery and mark what became of it."""
        error = await self._send(delivery.id, delivery.body)
        if error is None:
            await self._outbox.delivered(delivery.id)
            WEBHOOK_SENDS.labels("delivered").inc()
            return True
        retry_in = float(retry_delay(delivery.attempts))
        await self._outbox.failed(delivery.id, error, retry_in=retry_in, max_attempts=self._max_attempts)
        if delivery.attempts >= self._max_attempts:
            WEBHOOK_SENDS.labels("abandoned").inc()
            log.warning("webhook_abandoned", delivery=delivery.id, attempts=delivery.attempts, error=error)
        else:
            WEBHOOK_SENDS.labels("failed").inc()
            log.info("webhook_send_failed", delivery=delivery.id, attempts=delivery.attempts, error=error)
        return False

    async def sample(self) -> None:
        """The backlog into /metrics."""
        backlog = await self._outbox.backlog(self._clock.now())
        WEBHOOK_OUTBOX.labels("pending").set(backlog.pending)
        WEBHOOK_OUTBOX.labels("retrying").set(backlog.retrying)
        WEBHOOK_OUTBOX.labels("abandoned").set(backlog.abandoned)
        WEBHOOK_OLDEST.set(backlog.oldest_pending_seconds)
        self._sampled = time.monotonic()

    async def _send(self, delivery: int, body: dict[str, Any]) -> str | None:
        payload = msgspec.json.encode(body)
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(self._secret, self._clock.now(), payload),
            DELIVERY_HEADER: str(delivery),
        }
        try:
            async with asyncio.timeout(self._send_limit):
                response = await self._http.post(self._url, content=payload, headers=headers)
        except (httpx.HTTPError, TimeoutError) as exc:
            return type(exc).__name__
        return None if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"

    async def _run(self) -> None:
        while not self.stopping:
            try:
                while await self.deliver_due() == self._batch and not self.stopping:
                    pass
                if time.monotonic() - self._sampled >= SAMPLE_EVERY:
                    await self.sample()
            except Exception as exc:  # noqa: BLE001  the database is away: try again next round
                log.warning("webhook_delivery_failed", error=type(exc).__name__)
            await asyncio.sleep(self._interval)
