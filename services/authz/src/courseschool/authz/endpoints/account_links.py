"""Single-use links by e-mail: "Forgot your password?" sends one (valid
PASSWORD_RESET_TTL), `admin users invite` another (INVITATION_TTL); on the link's page
the person chooses a password (the rule of every password) and is signed in, or asked
to sign in with it when a second step is theirs (a link alone never passes one).

A reset never tells whether an address has an account: the same answer, after the
same work (storage/account_links.py runs one statement either way), rate-limited per
address and per address typed in. Using a link ends the person's sessions and grants
as an administrator's reset does (password_reset.end_sessions_and_grants). A link used,
expired, superseded, of a disabled person, or of another person than the one this
browser is signed in as changes nothing and gets a page saying which."""

from __future__ import annotations

from typing import Literal

import msgspec

from courseschool.common.audit_events import AuditEvent
from courseschool.common.logging import audit

from ..families import AccountPages
from ..protocol.second_factors import covered
from ..storage.account_links import Link
from ..storage.mail_outbox import INVITATION, PASSWORD_RESET
from .account import new_password_checked
from .account_changes import tell
from .password_reset import end_sessions_and_grants
from .signin import _account

Refusal = Literal["unknown", "used", "expired", "other_person"]


class LinkRefused(Exception):
    """The link can't be used: `why` names which page says so."""

    def __init__(self, why: Refusal) -> None:
        super().__init__(why)
        self.why = why


class Chosen(msgspec.Struct, frozen=True, kw_only=True):
    """A password chosen through a link: the session opened (None: sign in with it, a
    second step is the person's), and what the link was."""

    purpose: str
    session_id: str | None
    email: str


async def forgot_password(c: AccountPages, email: str, *, ip: str) -> None:
    """A reset link to `email`, if it is a person's (not disabled); nothing says whether it was."""
    email = email.strip()[:320]
    await c.limits.count("rate_password_reset_per_ip", ip, ("rate_password_reset_per_account", _account(email)))
    user_id = await c.links.issue(PASSWORD_RESET, email=email, now=c.clock.now(), ttl=c.settings.password_reset_ttl)
    audit("password_reset_requested", actor="user", subject=user_id, ip=ip, known=user_id is not None)


async def usable_link(c: AccountPages, token: str, *, signed_in_as: str | None) -> Link:
    """The link `token` is, if it can be used now by this browser; LinkRefused otherwise."""
    link = await c.links.find(token)
    if link is None or link.disabled:
        raise LinkRefused("unknown")
    if link.used:
        raise LinkRefused("used")
    if c.clock.now() >= link.expires_at:
        raise LinkRefused("expired")
    if signed_in_as is not None and signed_in_as != link.user_id:
        raise LinkRefused("other_person")
    return link


async def choose_password(
    c: AccountPages, token: str, password: str, again: str, *, signed_in_as: str | None, ip: str, agent: str | None
) -> Chosen:
    """Spend the link on a new password: the person's sessions and grants end, then this
    browser is signed in unless a second step is theirs. InvalidRequestError for a
    password that breaks the rule (the link stays usable); LinkRefused as `usable_link`."""
    link = await usable_link(c, token, signed_in_as=signed_in_as)
    new_password_checked(password, again)
    password_hash = await c.passwords.hash(password)
    purpose = await c.links.spend(token, user_id=link.user_id, password_hash=password_hash, now=c.clock.now())
    if purpose is None:  # used or expired between the look and now
        raise LinkRefused("used")
    ended = await end_sessions_and_grants(c, link.user_id)
    user = await c.users.get(link.user_id)
    assert user is not None
    action: AuditEvent = "invitation_accepted" if purpose == INVITATION else "password_reset_by_link"
    audit(action, actor="user", subject=user.id, ip=ip, grants_ended=ended)
    if purpose == PASSWORD_RESET:
        await tell(c, user, "password_reset", ip=ip, agent=agent)
    second_step = (await c.second_factors.factors(user.id)).any or covered(
        await c.second_factors.two_step_rule(user.school_id), user.role
    )
    if second_step:
        return Chosen(purpose=purpose, session_id=None, email=user.email)
    now = c.clock.now()
    session_id = await c.sessions.create(user_id=user.id, auth_time=now, ttl=c.settings.session_ttl)
    await c.sessions.describe(session_id, ip=ip, agent=agent)
    audit("login_succeeded", actor="user", subject=user.id, ip=ip, factor="email_link")
    return Chosen(purpose=purpose, session_id=session_id, email=user.email)
