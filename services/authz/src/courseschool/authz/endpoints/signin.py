"""Signing in: checking a person's email and password, then the second step when they
have one (or setting one up when their school requires it), and opening a login
session (the interaction's login page and the standalone sign-in page use the same
`sign_in` and `second_step`), and finding who a browser's session is for."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import TooManyRequestsError
from courseschool.common.logging import audit
from courseschool.common.secrets import digest

from ..families import SignInPages, Visitors
from ..protocol.emails import canonical_email
from ..protocol.models import User
from ..protocol.second_factors import (
    Factor,
    accepted_step,
    covered,
    looks_like_recovery_code,
    looks_like_totp,
    normalised_code,
)
from ..storage.second_step import SecondStep
from ..storage.users import credential_version
from .account_changes import tell
from .second_factors import confirm_totp
from .waiting_step import SIGN_IN_AGAIN, step_person

LOGIN_FAILED = "The email or password is not right."
WRONG_CODE = "That code is not right, or was used already. Try the code your app shows now, or a recovery code."
TOO_MANY_CODES = "Too many wrong codes. Sign in again with your password."


class SignedIn(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str  # for the cookie
    user_id: str
    auth_time: int


async def sign_in(
    c: SignInPages, email: str, password: str, *, ip: str, agent: str | None, client_id: str | None
) -> SignedIn | SecondStep | None:
    """Check the credentials; on failure return None. Right, and the person has a second
    factor (or their school requires one they have not set up): the `SecondStep` the
    sign-in waits for, no session yet (`second_step`, `enrol_second_step`). Right and
    nothing more is asked: a login session.
    Too many attempts (from this address, or from it at this account;
    limits.SignInLimits) raise TooManyRequestsError before the password is even checked;
    too many checks under way at once (passwords.PasswordWork),
    TemporarilyUnavailableError. Every audit event names the caller's address (`ip`) and
    the app the person signs in for, if any; the session opened records `ip` and `agent`
    (the browser, as its User-Agent says). The one sign-in of every page: the
    interaction's (`interaction.login`) and the standalone one (web/signin.py)."""
    await c.limits.count("rate_login_per_ip", ip)
    account = _account(email)
    await _not_locked(c, account, ip, client_id)
    found = await c.users.get_for_login(email) if 0 < len(email) <= 320 else None
    user, password_hash = found if found else (None, None)
    checked = await c.passwords.check(password_hash, password[:1024])
    if not checked.ok or user is None or user.disabled:
        subject = user.id if user else None
        audit("login_failed", actor="user", subject=subject, client_id=client_id, ip=ip)
        await _failed(c, account, ip, subject)
        return None
    accepted = password_hash or ""
    if checked.new_hash and await c.users.upgrade_password_hash(user.id, accepted, checked.new_hash):
        accepted = checked.new_hash  # else a new password meanwhile: a step made of this one will not stand
    credential = credential_version(accepted)
    # The address's failures at the account are forgotten only when the whole sign-in
    # succeeds: a right password must not wipe the count of the codes guessed after it.
    if (await c.second_factors.factors(user.id)).any:
        audit("login_password_accepted", actor="user", subject=user.id, client_id=client_id, ip=ip, next="code")
        return SecondStep(user_id=user.id, what="verify", credential=credential)
    if covered(await c.second_factors.two_step_rule(user.school_id), user.role):
        audit("login_password_accepted", actor="user", subject=user.id, client_id=client_id, ip=ip, next="enrol")
        return SecondStep(user_id=user.id, what="enrol", credential=credential)
    return await _open_session(c, user, account, ip=ip, agent=agent, client_id=client_id, factor="password")


async def second_step(
    c: SignInPages, step: SecondStep, code: str, *, ip: str, agent: str | None, client_id: str | None
) -> SignedIn | None:
    """The code of the second step: an authenticator app's (RFC 6238, once per time
    step) or a recovery code (once). The same per-address rate and the same lockout as
    the password (a wrong code counts as a failed sign-in of the account); None: not
    right (`step.failures` counted: past MAX_FAILURES the caller starts the sign-in
    again), or the step no longer stands (`stale`)."""
    await c.limits.count("rate_login_per_ip", ip)
    user = await step_person(c, step)
    if user is None:
        stale(step)
        return None
    account = _account(user.email)
    await _not_locked(c, account, ip, client_id)
    factor = await _code_factor(c, user, normalised_code(code[:64]))
    if factor is None:
        step.failures += 1
        audit("second_factor_failed", actor="user", subject=user.id, client_id=client_id, ip=ip)
        await _failed(c, account, ip, user.id)
        return None
    if factor == "recovery_code":
        left = (await c.second_factors.factors(user.id)).recovery_codes_left
        audit("recovery_code_used", actor="user", subject=user.id, client_id=client_id, ip=ip, left=left)
    method = f"password+{factor}"
    return await _open_session(c, user, account, ip=ip, agent=agent, client_id=client_id, factor=method)


async def enrol_second_step(
    c: SignInPages, step: SecondStep, code: str, *, ip: str, agent: str | None, client_id: str | None
) -> tuple[SignedIn, list[str]] | None:
    """The school requires a second factor the person had not set up: the app they set
    up now (second_factors.begin_totp, then a code it shows) completes the sign-in; the
    new recovery codes come back to be shown once, and the person is told by e-mail (as
    from the security page, `add_totp`). None: the code was not right, or the step no
    longer stands (`stale`)."""
    user = await step_person(c, step) if step.what == "enrol" else None
    if user is None:
        stale(step)
        return None
    codes = await confirm_totp(c, user, code, ip=ip)
    if codes is None:
        step.failures += 1
        return None
    await tell(c, user, "totp_added", ip=ip, agent=agent)
    account = _account(user.email)
    signed_in = await _open_session(c, user, account, ip=ip, agent=agent, client_id=client_id, factor="password+totp")
    return signed_in, codes


MAX_FAILURES = 5  # wrong codes in one sign-in before the password is asked again


def stale(step: SecondStep) -> None:
    """A step that no longer stands (waiting_step.py) takes nothing more: counted out,
    so the caller asks for the password again (saying why: `restart_reason`)."""
    step.failures = max(step.failures, MAX_FAILURES)
    step.ended = True


def restart_reason(step: SecondStep) -> str:
    """Why the password is asked again after a step past MAX_FAILURES."""
    return SIGN_IN_AGAIN if step.ended else TOO_MANY_CODES


def _account(email: str) -> str:
    return digest(canonical_email(email)).hex()


async def _not_locked(c: SignInPages, account: str, ip: str, client_id: str | None) -> None:
    refusal = await c.limits.sign_in.refusal(account, ip)
    if refusal:
        audit(
            "login_locked", actor="user", client_id=client_id, ip=ip, rule=refusal.rule, retry_after=refusal.retry_after
        )
        raise TooManyRequestsError(refusal.message, retry_after=refusal.retry_after)


async def _failed(c: SignInPages, account: str, ip: str, subject: str | None) -> None:
    for rule in await c.limits.sign_in.failed(account, ip):
        audit("account_locked", actor="system", subject=subject, ip=ip, rule=rule)


async def _code_factor(c: SignInPages, user: User, code: str) -> Factor | None:
    """Which factor `code` is right for, and spent now (None: neither)."""
    now = c.clock.now()
    if looks_like_totp(code):
        totp = await c.second_factors.totp(user.id)
        if totp is None or not totp.confirmed:
            return None
        step = accepted_step(totp.secret, code, now=now, last_step=totp.last_step)
        return "totp" if step is not None and await c.second_factors.use_totp(user.id, step) else None
    if looks_like_recovery_code(code):
        return "recovery_code" if await c.second_factors.use_recovery_code(user.id, code, now=now) else None
    return None


async def _open_session(
    c: SignInPages, user: User, account: str, *, ip: str, agent: str | None, client_id: str | None, factor: str
) -> SignedIn:
    """Every sign-in's session, described where it was opened from (the account page
    lists its browsers by address and device)."""
    await c.limits.sign_in.succeeded(account, ip)
    now = c.clock.now()
    session_id = await c.sessions.create(user_id=user.id, auth_time=now, ttl=c.settings.session_ttl)
    await c.sessions.describe(session_id, ip=ip, agent=agent)
    audit("login_succeeded", actor="user", subject=user.id, client_id=client_id, ip=ip, factor=factor)
    return SignedIn(session_id=session_id, user_id=user.id, auth_time=now)


async def signed_in_user(c: Visitors, session_id: str | None) -> User | None:
    """The person this browser's login session is for (None: not signed in)."""
    session = await c.sessions.get(session_id, now=c.clock.now())
    return await c.users.get(session.user_id) if session is not None else None
