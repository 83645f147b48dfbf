"""A change on a person's account, told to them by e-mail (mail/account_messages.CHANGES):
a password, a second factor, sessions ended. So that a person hears of a change they
did not make, it names when, from which browser and which address."""

from __future__ import annotations

from typing import Protocol

from courseschool.common.clock import Clock

from ..protocol.models import User
from ..storage.mail_outbox import PgMailOutbox


class Telling(Protocol):
    @property
    def mail(self) -> PgMailOutbox: ...
    @property
    def clock(self) -> Clock: ...


async def tell(c: Telling, user: User, change: str, *, ip: str | None, agent: str | None) -> None:
    """Queue the person's e-mail about `change` (nothing without SMTP_URL)."""
    await c.mail.account_changed(user.id, {"change": change, "address": ip, "device": agent}, now=c.clock.now())
