"""Signing in: checking a person's email and password and opening a login session
(the interaction's login page and the standalone sign-in page use the same
`sign_in`), and finding who a browser's session is for."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import TooManyRequestsError
from courseschool.common.logging import audit
from courseschool.common.secrets import digest

from ..families import SignInPages, Visitors
from ..protocol.emails import canonical_email
from ..protocol.models import User

LOGIN_FAILED = "The email or password is not right."


class SignedIn(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str  # for the cookie
    user_id: str
    auth_time: int


async def sign_in(c: SignInPages, email: str, password: str, *, ip: str, client_id: str | None) -> SignedIn | None:
    """Check the credentials; on success open a login session, on failure return None.
    Too many attempts (from this address, or from it at this account;
    limits.SignInLimits) raise TooManyRequestsError before the password is even checked;
    too many checks under way at once (passwords.PasswordWork),
    TemporarilyUnavailableError. Every audit event names the caller's address (`ip`) and
    the app the person signs in for, if any. The one sign-in of every page: the
    interaction's (`interaction.login`) and the standalone one (web/signin.py)."""
    await c.limits.count("rate_login_per_ip", ip)
    account = digest(canonical_email(email)).hex()
    refusal = await c.limits.sign_in.refusal(account, ip)
    if refusal:
        audit(
            "login_locked", actor="user", client_id=client_id, ip=ip, rule=refusal.rule, retry_after=refusal.retry_after
        )
        raise TooManyRequestsError(refusal.message, retry_after=refusal.retry_after)
    found = await c.users.get_for_login(email) if 0 < len(email) <= 320 else None
    user, password_hash = found if found else (None, None)
    checked = await c.passwords.check(password_hash, password[:1024])
    if not checked.ok or user is None or user.disabled:
        subject = user.id if user else None
        audit("login_failed", actor="user", subject=subject, client_id=client_id, ip=ip)
        for rule in await c.limits.sign_in.failed(account, ip):
            audit("account_locked", actor="system", subject=subject, ip=ip, rule=rule)
        return None
    await c.limits.sign_in.succeeded(account, ip)
    if checked.new_hash:
        await c.users.set_password_hash(user.id, checked.new_hash)
    now = c.clock.now()
    session_id = await c.sessions.create(user_id=user.id, auth_time=now, ttl=c.settings.session_ttl)
    audit("login_succeeded", actor="user", subject=user.id, client_id=client_id, ip=ip)
    return SignedIn(session_id=session_id, user_id=user.id, auth_time=now)


async def signed_in_user(c: Visitors, session_id: str | None) -> User | None:
    """The person this browser's login session is for (None: not signed in)."""
    session = await c.sessions.get(session_id, now=c.clock.now())
    return await c.users.get(session.user_id) if session is not None else None
