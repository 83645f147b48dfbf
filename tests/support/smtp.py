"""A real SMTP server on loopback for the mail tests (aiosmtpd, in a thread of its own):
it keeps every message it accepted, can refuse the next messages with a temporary error
(451, or a permanent 550), ask for STARTTLS and credentials, or be a relay that accepts a connection and
never answers (`silent_relay`)."""

from __future__ import annotations

import asyncio
import email
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from .net import free_port


@dataclass
class Accepted:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes

    @property
    def message(self) -> EmailMessage:
        parsed = email.message_from_bytes(self.data, policy=default)
        assert isinstance(parsed, EmailMessage)
        return parsed


@dataclass
class SmtpRelay:
    host: str
    port: int
    accepted: list[Accepted] = field(default_factory=list)
    refuse: int = 0  # the next this many messages get `refusal` after their data
    refusal: str = "451 4.3.0 Try again later"  # a temporary one; "550 ..." refuses for good
    logins: list[str] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd calls it by this name
        if self.refuse > 0:
            self.refuse -= 1
            return self.refusal
        self.accepted.append(Accepted(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 2.0.0 Message accepted for delivery"


@contextmanager
def smtp_relay(
    *, certs: tuple[Path, Path] | None = None, credentials: tuple[str, str] | None = None
) -> Iterator[SmtpRelay]:
    """A relay on 127.0.0.1. `certs` (server.pem, server.key): STARTTLS offered and
    required before anything else; `credentials`: AUTH required, only over TLS."""
    relay = SmtpRelay(host="127.0.0.1", port=free_port())
    options: dict[str, Any] = {}
    if certs is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(certs[0]), str(certs[1]))
        options |= {"tls_context": context, "require_starttls": True}
    if credentials is not None:

        def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
            ok = (
                isinstance(auth_data, LoginPassword)
                and (
                    auth_data.login.decode(),
                    auth_data.password.decode(),
                )
                == credentials
            )
            if ok:
                relay.logins.append(auth_data.login.decode())
            return AuthResult(success=ok, handled=False)  # a refusal is answered 535

        options |= {"authenticator": authenticator, "auth_required": True, "auth_require_tls": certs is not None}
    controller = Controller(relay, hostname=relay.host, port=relay.port, **options)
    controller.start()
    try:
        yield relay
    finally:
        controller.stop()


@asynccontextmanager
async def silent_relay() -> AsyncIterator[tuple[int, list[int]]]:
    """A relay that accepts connections and never says a word: (its port, a list that
    grows by one per connection)."""
    connections: list[int] = []
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, connections
    finally:
        for writer in held:
            writer.close()
        server.close()
