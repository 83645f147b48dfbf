"""The mail outbox's delivery: messages to people handed to the operator's SMTP relay
(SMTP_URL, from MAIL_FROM) by a task of its own, so that no request waits for a relay.

One message at a time is claimed (its next attempt pushed a lease ahead, other replicas
skip it), built (mail/messages.py) and handed to the relay with aiosmtplib within
MAIL_TIMEOUT for the whole conversation; the lease is twice that and a minute more, so
it never runs out while a send can still be going on. The relay's acceptance of the
message (RFC 5321 §4.1.1.4: 250 after the data) marks it sent, and it is never sent
again; a relay's permanent refusal of this message (RFC 5321 §4.2.1: a 5yz reply to
its recipient or its data, or a message that cannot be built) abandons it at once, since
no later try can do better; anything else (4yz, a timeout, a refused connection, a
refused login the operator may yet fix) is tried again later with the webhook's doubling
delay, up to MAIL_MAX_ATTEMPTS, then abandoned and logged. A crash between the relay's 250 and the
mark can send one message twice; its Message-ID is the same on every try.

The log names a message by its outbox id and kind, never its address or text, and an
error by its class and SMTP code only (a relay's reply text may echo the address).
The backlog (pending, retrying, abandoned, the oldest pending message's wait) is
sampled into /metrics (CourseSchoolMailBacklog)."""

from __future__ import annotations

import asyncio
import ssl
import time

import aiosmtplib
import asyncpg
from cryptography.exceptions import InvalidTag

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.jose import KeyEncryptor, decode_kek
from courseschool.common.logging import get_logger
from courseschool.common.metrics import MAIL_OLDEST, MAIL_OUTBOX, MAIL_SENDS

from ..settings import AuthzSettings
from ..storage.account_links import opened
from ..storage.mail_outbox import Claimed, PgMailOutbox
from ..webhook import retry_delay
from .messages import Recipient, Sender, build_message
from .relay import Relay, from_address, parse_smtp_url

log = get_logger(__name__)

SAMPLE_EVERY = 15.0  # seconds between two samples of the backlog for /metrics


def lease_for(timeout: float) -> float:
    """How long a claimed message is held: longer than its send can take."""
    return 2 * timeout + 60


def permanent(exc: aiosmtplib.SMTPResponseException) -> bool:
    """A 5yz reply to this message's recipient or data (RFC 5321 §4.2.1): the relay will
    never take it. A refused login or sender is the operator's to fix, not the message's:
    those are tried again."""
    refusals = (aiosmtplib.SMTPRecipientRefused, aiosmtplib.SMTPDataError)
    return isinstance(exc, refusals) and 500 <= exc.code < 600


class MailDelivery(BackgroundLoop):
    """Sends the outbox's messages through the operator's relay, retrying with backoff."""

    name = "mail_delivery"

    def __init__(self, settings: AuthzSettings, pool: asyncpg.Pool, clock: Clock, *, batch: int = 20) -> None:
        assert settings.smtp_url and settings.mail_from and settings.key_encryption_key
        self._encryptor = KeyEncryptor(decode_kek(settings.key_encryption_key))  # opens a link's sealed token
        self._relay: Relay = parse_smtp_url(settings.smtp_url)
        self._envelope_from = from_address(settings.mail_from).addr_spec
        self._sender = Sender(mail_from=settings.mail_from, base_url=settings.base_url)
        self._timeout = settings.mail_timeout
        self._max_attempts = settings.mail_max_attempts
        self._interval = settings.mail_interval
        self._outbox = PgMailOutbox(pool, enabled=True)
        self._clock = clock
        self._batch = batch
        self._tls = ssl.create_default_context(cafile=settings.smtp_ca_bundle)
        self._sampled = 0.0
        super().__init__()

    async def deliver_due(self) -> int:
        """One pass: send up to a batch of what is due, one claim each, until a send
        fails (a relay that refuses or hangs is not asked again within the pass; the
        next pass is MAIL_INTERVAL later); how many were sent."""
        sent = 0
        for _ in range(self._batch):
            if self.stopping:
                break
            message = await self._outbox.claim(lease_for(self._timeout), now=self._clock.now())
            if message is None:
                break
            failure = await self._send(message)
            if failure is None:
                await self._outbox.sent(message.id)
                MAIL_SENDS.labels("sent").inc()
                log.info("mail_sent", message=message.id, kind=message.kind, attempts=message.attempts)
                sent += 1
                continue
            error, permanent = failure
            last_try = message.attempts if permanent else self._max_attempts
            await self._outbox.failed(
                message.id, error, retry_in=float(retry_delay(message.attempts)), max_attempts=last_try
            )
            said = {"message": message.id, "kind": message.kind, "attempts": message.attempts, "error": error}
            if message.attempts >= last_try:
                MAIL_SENDS.labels("abandoned").inc()
                log.warning("mail_abandoned", **said)
            else:
                MAIL_SENDS.labels("failed").inc()
                log.info("mail_send_failed", **said)
            break
        return sent

    async def _send(self, message: Claimed) -> tuple[str, bool] | None:
        """Hand one message to the relay; None when it took it, else why not (class and
        code) and whether the refusal is permanent (`permanent`)."""
        try:
            email = build_message(
                message.kind,
                {**message.details, **opened(self._encryptor, message.kind, message.sealed)},
                to=Recipient(email=message.recipient, name=message.recipient_name),
                sender=self._sender,
                message_id=message.message_id,
                now=self._clock.now(),
            )
        except (ValueError, InvalidTag) as exc:  # an address it cannot carry, a seal not ours: no try will do better
            return f"unbuildable: {type(exc).__name__}", True
        relay = self._relay
        try:
            async with asyncio.timeout(self._timeout):
                await aiosmtplib.send(
                    email,
                    sender=self._envelope_from,
                    recipients=[message.recipient],
                    hostname=relay.host,
                    port=relay.port,
                    username=relay.username,
                    password=relay.password,
                    use_tls=relay.security == "tls",
                    start_tls=relay.security == "starttls",  # required when asked for: never in the clear
                    tls_context=self._tls if relay.security != "none" else None,
                    timeout=self._timeout,
                )
        except TimeoutError:
            return "timeout", False
        except aiosmtplib.SMTPResponseException as exc:
            return f"{type(exc).__name__} {exc.code}", permanent(exc)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [r.code for r in exc.recipients]
            return f"{type(exc).__name__} {' '.join(map(str, codes))}", all(500 <= c < 600 for c in codes)
        except (aiosmtplib.SMTPException, OSError) as exc:
            return type(exc).__name__, False
        return None

    async def sample(self) -> None:
        """The backlog into /metrics."""
        backlog = await self._outbox.backlog(self._clock.now())
        MAIL_OUTBOX.labels("pending").set(backlog.pending)
        MAIL_OUTBOX.labels("retrying").set(backlog.retrying)
        MAIL_OUTBOX.labels("abandoned").set(backlog.abandoned)
        MAIL_OLDEST.set(backlog.oldest_pending_seconds)
        self._sampled = time.monotonic()

    async def _run(self) -> None:
        # The first pass an interval after start, not at once: what a process finds queued
        # at start waits MAIL_INTERVAL at most, and a pass never races the start-up of the
        # app it runs in (the tests drive passes themselves, with a long interval).
        while not self.stopping:
            await asyncio.sleep(self._interval)
            if self.stopping:
                break
            try:
                while await self.deliver_due() == self._batch and not self.stopping:
                    pass
                if time.monotonic() - self._sampled >= SAMPLE_EVERY:
                    await self.sample()
            except Exception as exc:  # noqa: BLE001  the database is away: try again next round
                log.warning("mail_delivery_failed", error=type(exc).__name__)
