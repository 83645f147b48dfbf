"""Second factors: what a person set up (their security page: an authenticator app,
recovery codes), and their school's requirement of two-step sign-in (its owners'
page). The second step of a sign-in itself is `signin.second_step`."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import InvalidRequestError, NotFoundError
from courseschool.common.logging import audit

from ..families import AccountPages, SignInPages
from ..protocol.models import User
from ..protocol.second_factors import (
    TWO_STEP_RULES,
    accepted_step,
    covered,
    new_recovery_codes,
    new_totp_secret,
    normalised_code,
    provisioning_uri,
)
from ..storage.second_factors import Factors
from ..storage.second_step import SecondStep
from .account_changes import tell
from .waiting_step import step_person

NOT_OWNER = "this page is for the school's owners"
ALREADY = "an authenticator app is already set up; remove it first to set up another"
WRONG_ENROLMENT_CODE = "That code is not the one your app shows now. Type the six digits it shows, then try again."


class Enrolment(msgspec.Struct, frozen=True, kw_only=True):
    """An authenticator app being set up: the secret the app takes (shown, and as a QR code)."""

    secret: str
    uri: str  # otpauth://totp/..., what the QR code carries


class SecurityView(msgspec.Struct, frozen=True, kw_only=True):
    factors: Factors
    required: bool  # the person's school requires two-step sign-in of them
    school_rule: str


async def security_view(c: AccountPages, user: User) -> SecurityView:
    factors = await c.second_factors.factors(user.id)
    rule = await c.second_factors.two_step_rule(user.school_id)
    return SecurityView(factors=factors, required=covered(rule, user.role), school_rule=rule)


async def begin_totp(c: AccountPages | SignInPages, user: User, *, by: str) -> Enrolment:
    """The secret of the app being set up: the one under way if this page (`by`: its
    session, or its sign-in) began it a few minutes ago, else a new one. A secret someone
    else was shown (whoever knew the password) is never the person's own."""
    current = await c.second_factors.totp(user.id)
    if current is not None and current.confirmed:
        raise InvalidRequestError(ALREADY, advice="Your authenticator app is already set up.")
    if current is not None and await c.second_steps.enrolment_held_by(user.id, by):
        return Enrolment(secret=current.secret, uri=provisioning_uri(current.secret, user.email))
    secret = new_totp_secret()
    await c.second_factors.begin_totp(user.id, secret, now=c.clock.now())
    await c.second_steps.hold_enrolment(user.id, by)
    return Enrolment(secret=secret, uri=provisioning_uri(secret, user.email))


async def confirm_totp(c: AccountPages | SignInPages, user: User, code: str, *, ip: str) -> list[str] | None:
    """The app is set up once a code it shows is right (RFC 6238): then new recovery
    codes, returned to be shown once. None: the code was not right (nothing changed)."""
    current = await c.second_factors.totp(user.id)
    if current is None or current.confirmed:
        raise InvalidRequestError(ALREADY if current else "no authenticator app is being set up")
    now = c.clock.now()
    step = accepted_step(current.secret, normalised_code(code), now=now, last_step=current.last_step)
    if step is None or not await c.second_factors.confirm_totp(user.id, step, now=now):
        return None
    codes = new_recovery_codes()
    await c.second_factors.replace_recovery_codes(user.id, codes, now=now)
    audit("second_factor_added", actor="user", subject=user.id, factor="totp", ip=ip)
    return codes


async def add_totp(c: AccountPages, user: User, code: str, *, ip: str, agent: str | None = None) -> list[str] | None:
    """`confirm_totp` from the security page: the person told by e-mail once it is on."""
    codes = await confirm_totp(c, user, code, ip=ip)
    if codes is not None:
        await tell(c, user, "totp_added", ip=ip, agent=agent)
    return codes


async def remove_totp(c: AccountPages, user: User, *, ip: str, agent: str | None = None) -> bool:
    """Forget the authenticator app, and the recovery codes that stood in for it."""
    removed = await c.second_factors.remove_totp(user.id)
    await c.second_factors.drop_recovery_codes(user.id)
    if removed:
        audit("second_factor_removed", actor="user", subject=user.id, factor="totp", ip=ip)
        await tell(c, user, "totp_removed", ip=ip, agent=agent)
    return removed


async def renew_recovery_codes(c: AccountPages, user: User, *, ip: str, agent: str | None = None) -> list[str]:
    """Ten new recovery codes; the old ones stop working."""
    if not (await c.second_factors.factors(user.id)).any:
        raise InvalidRequestError(
            "recovery codes stand in for a second factor; set one up first",
            advice="Set up an authenticator app first: recovery codes come with it.",
        )
    codes = new_recovery_codes()
    await c.second_factors.replace_recovery_codes(user.id, codes, now=c.clock.now())
    audit("recovery_codes_renewed", actor="user", subject=user.id, ip=ip)
    await tell(c, user, "recovery_codes_renewed", ip=ip, agent=agent)
    return codes


class EnrolmentView(msgspec.Struct, frozen=True, kw_only=True):
    enrolment: Enrolment
    school_name: str


async def required_enrolment(c: SignInPages, step: SecondStep, *, by: str) -> EnrolmentView:
    """The authenticator app the school requires, set up between the password and the
    session; `by`, the sign-in (its binding)."""
    user = await step_person(c, step) if step.what == "enrol" else None
    if user is None:
        raise InvalidRequestError("the sign-in has expired", advice="Sign in again.")
    school_name = await c.users.school_name(user.school_id) or "Your school"
    return EnrolmentView(enrolment=await begin_totp(c, user, by=by), school_name=school_name)


def school_owner(user: User) -> User:
    """The signed-in person, if they own their school; 404 otherwise (the page does not exist for them)."""
    if user.role != "owner" or user.disabled:
        raise NotFoundError(NOT_OWNER)
    return user


async def two_step_rule(c: AccountPages, user: User) -> str:
    school_owner(user)
    return await c.second_factors.two_step_rule(user.school_id)


async def require_two_step(c: AccountPages, user: User, rule: str, *, ip: str) -> None:
    """The school's requirement of two-step sign-in, set by an owner (an event)."""
    school_owner(user)
    if rule not in TWO_STEP_RULES:
        raise InvalidRequestError(
            "choose who must sign in in two steps", advice="Go back and choose one of the options."
        )
    before = await c.second_factors.two_step_rule(user.school_id)
    if before == rule:
        return
    await c.second_factors.set_two_step_rule(user.school_id, rule, by=user.id, now=c.clock.now())
    audit("two_step_required", actor="user", subject=user.id, school_id=user.school_id, rule=rule, before=before, ip=ip)
