"""Inviting a person to a school: a new account without a password (passwords.NO_PASSWORD),
e-mailed a single-use link (valid INVITATION_TTL) where they choose one and are signed
in (endpoints/account_links.py). Someone invited before who has not chosen a password
yet is sent a new link (the earlier one stops working).

The one use case behind `admin users invite` (the internal admin API and the admin CLI,
endpoints/admin/people.py, any school and any role) and the school's people page
(web/school_people.py: an owner invites to their own school an admin, a lecturer or a
student; only the platform's administrators make owners). Each caller records the
event `user_invited` as its actor."""

from __future__ import annotations

import re
from typing import Any, Protocol

import msgspec

from courseschool.common.clock import Clock
from courseschool.common.errors import ConflictError, InvalidRequestError, fit_description
from courseschool.common.logging import audit
from courseschool.common.scopes import ROLES

from ..families import AccountPages
from ..passwords import NO_PASSWORD
from ..protocol.models import User
from ..settings import AuthzSettings
from ..storage.account_links import Pending, PgAccountLinkStore
from ..storage.admin import PgAdminStore
from ..storage.mail_outbox import INVITATION
from ..storage.users import PgUserStore
from .second_factors import school_owner

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


OWNER_INVITES = ("admin", "lecturer", "student")  # only the platform's administrators make owners
NOT_AN_OWNER_ROLE = "an owner may invite an admin, a lecturer or a student"


async def invite_to_own_school(
    c: AccountPages, owner: User, *, email: str, name: str, role: str, ip: str
) -> Invited | None:
    """An owner's invitation to their own school (404 for anyone else; 429 past
    RATE_INVITATIONS_PER_OWNER). An address of one of the school's people who has a
    password: ConflictError, saying so (an owner sees their school's people). An address
    of another school's person: None, nothing sent nor created, and the page answers as
    for an invitation (it tells nobody whether an address has an account elsewhere)."""
    school_owner(owner)
    email, name = email.strip(), " ".join(name.split())
    if role not in OWNER_INVITES:
        raise InvalidRequestError(
            NOT_AN_OWNER_ROLE,
            advice="Choose admin, lecturer or student: only the platform's administrators make owners.",
        )
    check_person(email, name)
    await c.limits.count("rate_invitations_per_owner", owner.id)
    school = await c.admin_store.school(owner.school_id)
    assert school is not None
    existing = await c.admin_store.user(email)
    if existing is not None and existing["school"] != school["slug"]:
        audit("user_invite_refused", actor="user", subject=owner.id, invitee=existing["id"], reason="elsewhere", ip=ip)
        return None
    try:
        invited = await invite(c, school, email=email, name=name, role=role)
    except ConflictError as err:
        raise ConflictError(
            f"{fit_description(email)} is already one of the school's people", detail=err.detail
        ) from None
    audit(
        "user_invited",
        actor="user",
        subject=owner.id,
        invitee=invited.user_id,
        role=invited.role,
        school=school["slug"],
        again=invited.again,
        ip=ip,
    )
    return invited


async def pending_invitations(c: AccountPages, owner: User) -> list[Pending]:
    """The owner's school's invitations not taken up yet (404 for anyone but an owner)."""
    school_owner(owner)
    return await c.links.pending_invitations(owner.school_id, now=c.clock.now())
