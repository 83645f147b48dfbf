"""Inviting a person to a school: a new account without a password (passwords.NO_PASSWORD),
e-mailed a single-use link (valid INVITATION_TTL) where they choose one and are signed
in (endpoints/account_links.py). Someone invited before who has not chosen a password
yet is sent a new link (the earlier one stops working).

The one use case behind `admin users invite` (the internal admin API and the admin CLI,
endpoints/admin/people.py, any school and any role). The caller records the event
`user_invited` as its actor."""

from __future__ import annotations

import re
from typing import Any, Protocol

import msgspec

from courseschool.common.clock import Clock
from courseschool.common.errors import ConflictError, InvalidRequestError, fit_description
from courseschool.common.scopes import ROLES

from ..passwords import NO_PASSWORD
from ..settings import AuthzSettings
from ..storage.account_links import PgAccountLinkStore
from ..storage.admin import PgAdminStore
from ..storage.mail_outbox import INVITATION
from ..storage.users import PgUserStore

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Inviting(Protocol):
    """What inviting reads (Administration, AccountPages)."""

    @property
    def settings(self) -> AuthzSettings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def admin_store(self) -> PgAdminStore: ...
    @property
    def users(self) -> PgUserStore: ...
    @property
    def links(self) -> PgAccountLinkStore: ...


class Invited(msgspec.Struct, frozen=True, kw_only=True):
    """An invitation queued for e-mail: to whom, as what, until when (epoch seconds)."""

    user_id: str
    role: str  # the person's (someone invited again keeps the role they were invited as)
    until: int
    again: bool  # invited before, not signed up yet: a new link


def check_role(role: str) -> None:
    if role not in ROLES:
        raise InvalidRequestError(f"role must be one of {', '.join(ROLES)}")


def check_person(email: str, name: str) -> None:
    if not EMAIL.match(email) or len(email) > 320 or not 0 < len(name) <= 200:
        raise InvalidRequestError(
            "a valid email and a name of 1 to 200 characters are needed",
            advice="Type the person's e-mail address and their name, then try again.",
        )


async def invite(c: Inviting, school: dict[str, Any], *, email: str, name: str, role: str) -> Invited:
    """Invite `email` to `school` (a row of admin_store.school): ConflictError when the
    address is a person's who has a password or is disabled."""
    existing = await c.admin_store.user(email)
    if existing is not None and (existing["disabled"] or not await c.users.awaiting_password(existing["id"])):
        state = "is disabled" if existing["disabled"] else "has a password"
        raise ConflictError(
            f"a user with the email {fit_description(email)} exists and {state}", detail=f"email as given: {email}"
        )
    if existing is None:
        check_role(role)
        check_person(email, name)
        user = await c.users.create(
            school_id=school["id"],
            email=email,
            name=name,
            preferred_username=email.split("@")[0],
            role=role,
            password_hash=NO_PASSWORD,
        )
        user_id, role_now = user.id, role
    else:
        user_id, role_now = existing["id"], existing["role"]
    now = c.clock.now()
    await c.links.issue(INVITATION, user_id=user_id, now=now, ttl=c.settings.invitation_ttl)
    return Invited(user_id=user_id, role=role_now, until=now + c.settings.invitation_ttl, again=existing is not None)
