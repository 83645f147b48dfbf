"""The signed-in person's account page: their password, the browsers signed in now
(device, address, last seen) with "sign out everywhere else", next to their connected
apps and second factors. Every change here, and on the security page, needs a recent
sign-in (`recent`: the password or a code entered within RECENT_SIGN_IN seconds, at the
sign-in or re-entered on the confirmation page, `confirm_identity`) and sends the person
an e-mail (`tell`), so that they hear of a change they did not make."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import InvalidRequestError, TooManyRequestsError
from courseschool.common.logging import audit

from ..families import AccountPages, Visitors
from ..protocol.emails import canonical_email
from ..protocol.models import User
from ..protocol.second_factors import accepted_step, looks_like_totp, normalised_code
from ..storage.sessions import Browser, LoginSession
from .account_changes import tell
from .password_reset import check_password_rule
from .signin import _account

PASSWORDS_DIFFER = "The two passwords are not the same."
NOT_CONFIRMED = "That is not your password, nor a code your app shows now."


class AccountView(msgspec.Struct, frozen=True, kw_only=True):
    user: User
    browsers: list[Browser]
    has_app: bool  # an authenticator app: its code confirms it is them, as the password does


async def school_name(c: Visitors, user: User) -> str:
    """The name of the person's school as the pages say it."""
    return await c.users.school_name(user.school_id) or "your school"


async def account_view(c: AccountPages, user: User, session_id: str) -> AccountView:
    browsers = await c.sessions.browsers(user.id, session_id, now=c.clock.now())
    totp = await c.second_factors.totp(user.id)
    return AccountView(user=user, browsers=browsers, has_app=totp is not None and totp.confirmed)


def recent(c: AccountPages, session: LoginSession) -> bool:
    """The person entered their password or a code within RECENT_SIGN_IN seconds."""
    return c.clock.now() - session.confirmed_at <= c.settings.recent_sign_in


def new_password_checked(password: str, again: str) -> str:
    """The new password, twice the same and within the rule; InvalidRequestError otherwise."""
    if password != again:
        raise InvalidRequestError(PASSWORDS_DIFFER)
    check_password_rule(password)
    return password


async def change_password(
    c: AccountPages, user: User, session_id: str, password: str, again: str, *, ip: str, agent: str | None
) -> int:
    """A new password; the person's other browsers are signed out (this one stays); how many."""
    new_password_checked(password, again)
    await c.users.set_password_hash(user.id, await c.passwords.hash(password))
    ended = await c.sessions.end_others(user.id, session_id)
    await c.second_factors.drop_unconfirmed_totp(user.id)
    audit("password_changed", actor="user", subject=user.id, ip=ip, sessions_ended=ended)
    await tell(c, user, "password_changed", ip=ip, agent=agent)
    return ended


async def sign_out_elsewhere(c: AccountPages, user: User, session_id: str, *, ip: str, agent: str | None) -> int:
    """End every session of the person but this browser's; how many ended."""
    ended = await c.sessions.end_others(user.id, session_id)
    audit("signed_out_elsewhere", actor="user", subject=user.id, ip=ip, sessions_ended=ended)
    await tell(c, user, "signed_out_elsewhere", ip=ip, agent=agent)
    return ended


async def confirm_identity(c: AccountPages, user: User, session_id: str, *, password: str, code: str, ip: str) -> bool:
    """The person re-enters their password, or a code of their authenticator app: the
    session counts as a recent sign-in from now. The same rate, lockout and failure count
    as a sign-in (a guess here is a guess at the password)."""
    await c.limits.count("rate_login_per_ip", ip)
    account = _account(user.email)
    refusal = await c.limits.sign_in.refusal(account, ip)
    if refusal:
        raise TooManyRequestsError(refusal.message, retry_after=refusal.retry_after)
    ok = (
        await _code_right(c, user, normalised_code(code[:64]))
        if code.strip()
        else await _password_right(c, user, password[:1024])
    )
    if not ok:
        audit("sign_in_confirmation_failed", actor="user", subject=user.id, ip=ip)
        await c.limits.sign_in.failed(account, ip)
        return False
    await c.limits.sign_in.succeeded(account, ip)
    await c.sessions.confirm(session_id, now=c.clock.now())
    audit("sign_in_confirmed", actor="user", subject=user.id, ip=ip, factor="totp" if code.strip() else "password")
    return True


async def _password_right(c: AccountPages, user: User, password: str) -> bool:
    found = await c.users.get_for_login(canonical_email(user.email))
    return (await c.passwords.check(found[1] if found else None, password)).ok and found is not None


async def _code_right(c: AccountPages, user: User, code: str) -> bool:
    totp = await c.second_factors.totp(user.id)
    if not looks_like_totp(code) or totp is None or not totp.confirmed:
        return False
    step = accepted_step(totp.secret, code, now=c.clock.now(), last_step=totp.last_step)
    return step is not None and await c.second_factors.use_totp(user.id, step)
