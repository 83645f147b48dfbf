"""GET and POST /oauth/signin: signing in outside an authorization request, for the
pages of the person's own account (the connected apps). The same sign-in as the
interaction's login page (`endpoints.signin.sign_in`: rate limit, lockout), the
same form; its CSRF token is bound to a cookie of this page's own, since there is no
session yet (login CSRF: another site cannot sign the browser in to its account).
Afterwards the browser goes only to one of our own pages (`NEXT_PAGES`). After the
password, the second step (/oauth/signin/second-step): a code or a passkey, or the second
factor the school requires set up (an authenticator app or a passkey), its recovery codes
shown once on the security page's /oauth/security/codes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response, get, post
from litestar.datastructures import Cookie

from courseschool.common.answers import PAGE
from courseschool.common.errors import ForbiddenError
from courseschool.common.secrets import new_token

from ..endpoints.passkey_enrolment import PASSKEY_NOT_SAVED, enrol_passkey, enrolment_options
from ..endpoints.passkey_sign_in import (
    PASSKEY_NOT_RIGHT,
    PASSKEY_REFUSED,
    passkey_second_step,
    passkey_sign_in,
    second_step_options,
    sign_in_options,
)
from ..endpoints.second_factors import WRONG_ENROLMENT_CODE, required_enrolment
from ..endpoints.signin import (
    LOGIN_FAILED,
    MAX_FAILURES,
    TOO_MANY_CODES,
    WRONG_CODE,
    enrol_second_step,
    second_step,
    sign_in,
    signed_in_user,
)
from ..endpoints.signin import SignedIn as Done
from ..endpoints.waiting_step import SIGN_IN_AGAIN, standalone_step
from ..families import SignInPages
from ..settings import AuthzSettings
from ..storage.second_step import SecondStep
from . import page_forms
from .cookies import session_cookie, session_cookie_name
from .http import SignInPagesDep, client_agent, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .qr import qr_svg

PATH = "/oauth/signin"
PURPOSE = "signin"
SIGNIN_COOKIE = "cs_signin"
SECOND_STEP = f"{PATH}/second-step"  # under PATH: the sign-in cookie comes along
SECOND_PURPOSE = "signin-second-step"
# Where a sign-in may lead; the first is the default.
NEXT_PAGES = ("/oauth/apps", "/oauth/school/apps", "/oauth/security", "/oauth/school/security", "/oauth/account")


def signin_url(next_page: str) -> str:
    return f"{PATH}?{urlencode({'next': next_page})}"


def _next(value: str | None) -> str:
    return value if value in NEXT_PAGES else NEXT_PAGES[0]


def _signin_cookie(settings: AuthzSettings, value: str, max_age: int) -> Cookie:
    return Cookie(
        key=SIGNIN_COOKIE,
        value=value,
        path=PATH,
        httponly=True,
        secure=settings.cookie_secure,
        samesite="lax",
        max_age=max_age,
    )


_SIGNIN_ERRORS = {"1": LOGIN_FAILED, "codes": TOO_MANY_CODES, "ended": SIGN_IN_AGAIN, "passkey": PASSKEY_REFUSED}


@get(PATH, opt=PAGE)
async def signin_page(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    next_page = _next(request.query_params.get("next"))
    if await signed_in_user(sign_in_pages, request.cookies.get(session_cookie_name(sign_in_pages.settings))):
        return see_other(next_page)
    binding = request.cookies.get(SIGNIN_COOKIE)
    if not binding or len(binding) > 128:
        binding = new_token()
    passkey = await sign_in_options(sign_in_pages, binding)
    return render(
        "signin.html",
        csrf=page_forms.form_token(sign_in_pages, PURPOSE, binding),
        error=_SIGNIN_ERRORS.get(request.query_params.get("failed") or ""),
        next=next_page,
        cookies=[_signin_cookie(sign_in_pages.settings, binding, sign_in_pages.settings.interaction_ttl)],
        passkey=passkey,
        passkey_script=passkey is not None,
    )


@post(PATH, opt=PAGE)
async def signin_submit(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    fields = await form_fields(request)
    binding = request.cookies.get(SIGNIN_COOKIE)
    if not binding:
        raise ForbiddenError(page_forms.NOT_FROM_THIS_PAGE)
    page_forms.check_form_token(sign_in_pages, PURPOSE, binding, fields.get("csrf", ""))
    next_page = _next(fields.get("next"))
    email, password = fields.get("email", "").strip(), fields.get("password", "")
    outcome = await sign_in(
        sign_in_pages, email, password, ip=client_ip(request), agent=client_agent(request), client_id=None
    )
    if outcome is None:
        return see_other(f"{signin_url(next_page)}&failed=1")
    if isinstance(outcome, SecondStep):
        await sign_in_pages.second_steps.begin(binding, outcome)
        return see_other(f"{SECOND_STEP}?{urlencode({'next': next_page})}")
    return await _signed_in(request, sign_in_pages, outcome.session_id, next_page)


@post(f"{PATH}/passkey", opt=PAGE)
async def passkey_submit(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    """A passkey in place of the password."""
    fields = await form_fields(request)
    binding = _checked_binding(request, sign_in_pages, PURPOSE, fields)
    next_page = _next(fields.get("next"))
    signed_in = await passkey_sign_in(
        sign_in_pages,
        binding,
        fields.get("credential", ""),
        ip=client_ip(request),
        agent=client_agent(request),
        client_id=None,
    )
    if signed_in is None:
        return see_other(f"{signin_url(next_page)}&failed=passkey")
    return await _signed_in(request, sign_in_pages, signed_in.session_id, next_page)


def _checked_binding(
    request: Request[Any, Any, Any], sign_in_pages: SignInPages, purpose: str, fields: dict[str, str]
) -> str:
    """This page's cookie, when the form's token is of it (403 otherwise)."""
    binding = request.cookies.get(SIGNIN_COOKIE)
    if not binding:
        raise ForbiddenError(page_forms.NOT_FROM_THIS_PAGE)
    page_forms.check_form_token(sign_in_pages, purpose, binding, fields.get("csrf", ""))
    return binding


async def _signed_in(
    request: Request[Any, Any, Any], sign_in_pages: SignInPages, session_id: str, next_page: str
) -> Response[Any]:
    cookies = [
        session_cookie(sign_in_pages.settings, session_id, sign_in_pages.settings.session_ttl),
        _signin_cookie(sign_in_pages.settings, "", 0),
    ]
    return see_other(next_page, cookies=cookies)


@get(SECOND_STEP, opt=PAGE)
async def second_step_page(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    """After the password: the code, or the second factor the school requires set up."""
    next_page = _next(request.query_params.get("next"))
    binding = request.cookies.get(SIGNIN_COOKIE)
    step = await standalone_step(sign_in_pages, binding)
    if step is None or binding is None or step.ended:  # expired, never began, or stale: the password first
        return see_other(_password_again(next_page, step))
    csrf = page_forms.form_token(sign_in_pages, SECOND_PURPOSE, binding)
    action = f"{SECOND_STEP}?{urlencode({'next': next_page})}"
    passkey_action = f"{SECOND_STEP}/passkey?{urlencode({'next': next_page})}"
    failed = request.query_params.get("failed") or ""
    if step.what == "verify":
        passkey = await second_step_options(sign_in_pages, step, binding)
        return render(
            "second_step.html",
            action=action,
            csrf=csrf,
            error=_STEP_ERRORS.get(failed),
            passkey=passkey,
            passkey_action=passkey_action,
            passkey_script=passkey is not None,
        )
    view = await required_enrolment(sign_in_pages, step, by=binding)
    passkey = await enrolment_options(sign_in_pages, step, binding)
    return render(
        "enrol.html",
        action=action,
        csrf=csrf,
        error=_STEP_ERRORS.get(failed) if failed != "passkey" else None,
        passkey=passkey,
        passkey_action=passkey_action,
        passkey_error=PASSKEY_NOT_SAVED if failed == "passkey" else None,
        passkey_name=client_agent(request) or "",
        passkey_script=passkey is not None,
        qr=qr_svg(view.enrolment.uri, label="QR code to set up your authenticator app"),
        secret=view.enrolment.secret,
        required=True,
        school_name=view.school_name,
        back=None,
    )


def _password_again(next_page: str, step: SecondStep | None) -> str:
    """The sign-in page again, saying why when the waiting step no longer stands."""
    return f"{signin_url(next_page)}&failed=ended" if step is not None and step.ended else signin_url(next_page)


_STEP_ERRORS = {"code": WRONG_CODE, "enrol": WRONG_ENROLMENT_CODE, "passkey": PASSKEY_NOT_RIGHT}
Outcome = Done | tuple[Done, list[str]] | None  # a second step's: with the codes of a factor set up


@post(SECOND_STEP, opt=PAGE)
async def second_step_submit(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    fields = await form_fields(request)
    binding = _checked_binding(request, sign_in_pages, SECOND_PURPOSE, fields)
    step = await standalone_step(sign_in_pages, binding)
    if step is None or step.ended:
        return see_other(_password_again(_next(request.query_params.get("next")), step))
    code, ip, agent = fields.get("code", ""), client_ip(request), client_agent(request)
    outcome: Outcome
    if step.what == "verify":
        outcome = await second_step(sign_in_pages, step, code, ip=ip, agent=agent, client_id=None)
    else:
        outcome = await enrol_second_step(sign_in_pages, step, code, ip=ip, agent=agent, client_id=None)
    return await _after_step(
        request, sign_in_pages, binding, step, outcome, "code" if step.what == "verify" else "enrol"
    )


@post(f"{SECOND_STEP}/passkey", opt=PAGE)
async def second_step_passkey_submit(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    """A passkey as the second step, or set up as the second factor the school requires."""
    fields = await form_fields(request)
    binding = _checked_binding(request, sign_in_pages, SECOND_PURPOSE, fields)
    step = await standalone_step(sign_in_pages, binding)
    if step is None or step.ended:
        return see_other(_password_again(_next(request.query_params.get("next")), step))
    credential, ip, agent = fields.get("credential", ""), client_ip(request), client_agent(request)
    name = fields.get("name", "")
    outcome: Outcome
    if step.what == "verify":
        outcome = await passkey_second_step(
            sign_in_pages, step, binding, credential, ip=ip, agent=agent, client_id=None
        )
    else:
        outcome = await enrol_passkey(
            sign_in_pages, step, binding, name, credential, ip=ip, agent=agent, client_id=None
        )
    return await _after_step(request, sign_in_pages, binding, step, outcome, "passkey")


async def _after_step(
    request: Request[Any, Any, Any],
    sign_in_pages: SignInPages,
    binding: str,
    step: SecondStep,
    outcome: Outcome,
    failed: str,
) -> Response[Any]:
    """Signed in (by way of the recovery codes of a factor set up now), back to the
    password past MAX_FAILURES, or the step again saying what `failed`."""
    next_page = _next(request.query_params.get("next"))
    if isinstance(outcome, tuple):
        signed_in, codes = outcome
        await sign_in_pages.second_steps.keep_codes(f"session:{signed_in.session_id}", codes)
        new = {"new": "passkey"} if failed == "passkey" else {}
        next_page = f"/oauth/security/codes?{urlencode({'next': next_page, **new})}"
        outcome = signed_in
    if outcome is not None:
        await sign_in_pages.second_steps.drop(binding)
        return await _signed_in(request, sign_in_pages, outcome.session_id, next_page)
    if step.failures >= MAX_FAILURES:
        await sign_in_pages.second_steps.drop(binding)
        return see_other(f"{signin_url(next_page)}&failed={'ended' if step.ended else 'codes'}")
    await sign_in_pages.second_steps.save(binding, step)
    return see_other(f"{SECOND_STEP}?{urlencode({'next': next_page, 'failed': failed})}")
