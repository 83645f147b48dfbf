"""Security events and new connections, told to an operator's HTTPS webhook
(EVENTS_WEBHOOK_URL), so that a deployment can send the e-mail or page the on-call
engineer with the tools it already runs.

The event store puts each such event in `authz_webhook_outbox` in the statement that
records it; this task delivers from there, so no request ever waits for a receiver. A
delivery is claimed first, one at a time (its next attempt pushed a lease ahead, other
replicas skip it), then sent once with a time limit. The lease is longer than the send
can take (twice EVENTS_WEBHOOK_TIMEOUT, the whole send's hard limit, plus a minute for
the database): a lease that had to cover a whole batch (20 deliveries of up to 5 s each
under a 60 s lease) ran out while the batch was still being sent, and another replica
sent the rest again (issue 38, T4-4). a 2xx marks it delivered and it is never sent
again; anything else is tried again later with a doubling delay, up to
EVENTS_WEBHOOK_MAX_ATTEMPTS, then abandoned and logged. A crash between a receiver's 2xx
and the mark can send one delivery twice: receivers dedupe on `X-Course-School-Delivery`.

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
from typing import Any

import asyncpg
import httpx
import msgspec

from courseschool.common.background import STOP_GRACE, BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.logging import get_logger
from courseschool.common.outbound import default_tls

from .settings import AuthzSettings

log = get_logger(__name__)

SIGNATURE_HEADER = "X-Course-School-Signature"
DELIVERY_HEADER = "X-Course-School-Delivery"
LEASE_SECONDS = 60  # beyond the send's own limit: the statements around it
MAX_DELAY = 3600

_CLAIM = """
UPDATE authz_webhook_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
WHERE id IN (
    SELECT id FROM authz_webhook_outbox
    WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, body, attempts
"""  # one at a time: each delivery leased for its own send only
_DELIVERED = "UPDATE authz_webhook_outbox SET delivered_at = now(), last_error = NULL WHERE id = $1"
_FAILED = """
UPDATE authz_webhook_outbox SET last_error = $2, next_attempt_at = now() + make_interval(secs => $3),
    abandoned_at = CASE WHEN attempts >= $4 THEN now() END
WHERE id = $1
"""


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
        self._pool = pool
        self._clock = clock
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
        """One pass: send what is due, at most a batch; how many were delivered."""
        delivered = 0
        for _ in range(self._batch):
            row = await self._pool.fetchrow(_CLAIM, float(self._send_limit + LEASE_SECONDS))
            if row is None:
                break
            error = await self._send(row["id"], row["body"])
            if error is None:
                await self._pool.execute(_DELIVERED, row["id"])
                delivered += 1
            else:
                await self._pool.execute(
                    _FAILED, row["id"], error, float(retry_delay(row["attempts"])), self._max_attempts
                )
                if row["attempts"] >= self._max_attempts:
                    log.warning("webhook_abandoned", delivery=row["id"], attempts=row["attempts"], error=error)
        return delivered

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
            except Exception as exc:  # noqa: BLE001  the database is away: try again next round
                log.warning("webhook_delivery_failed", error=type(exc).__name__)
            await asyncio.sleep(self._interval)
