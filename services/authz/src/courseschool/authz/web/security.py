"""GET /oauth/security: the signed-in person's sign-in security: their authenticator app
(TOTP, RFC 6238) and recovery codes. Setting the app up (GET /oauth/security/totp, the QR
code and the key, POST with a code it shows), removing it and making new recovery codes
(each through a confirmation page, GET /oauth/security/confirm); new recovery codes are
shown once (GET /oauth/security/codes). Each of those changes needs a recent sign-in
(web/recent_sign_in.py) and is told to the person by e-mail. Every form bound to the session by its CSRF
token, 303 after every POST. Not signed in: the sign-in page, and back here afterwards.

GET /oauth/school/security: the school's requirement of two-step sign-in, for its
owners (404 for anyone else), POST to change it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response, Router, get, post

from courseschool.common.answers import PAGE
from courseschool.common.errors import InvalidRequestError

from ..endpoints.account import school_name
from ..endpoints.passkeys import passkeys_view
from ..endpoints.second_factors import (
    WRONG_ENROLMENT_CODE,
    add_totp,
    begin_totp,
    remove_totp,
    renew_recovery_codes,
    require_two_step,
    security_view,
    two_step_rule,
)
from ..families import AccountPages
from ..protocol.second_factors import TWO_STEP_RULES
from . import page_forms
from .http import AccountPagesDep, client_agent, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .qr import qr_svg
from .recent_sign_in import ConfirmFirst, recent_sign_in, to_confirm
from .signin import NEXT_PAGES
from .viewer import SignedIn, SignInFirst, Viewer, signed_in_viewer, to_sign_in

PATH = "/oauth/security"
SCHOOL_PATH = "/oauth/school/security"
PURPOSE = "security"  # the forms' CSRF purpose
SCHOOL_PURPOSE = "school-security"
ACTIONS = ("remove-totp", "renew-codes")
DONE = ("removed", "school", "passkey-added", "passkey-renamed", "passkey-removed")


def _codes_key(session_id: str) -> str:
    return f"session:{session_id}"


async def _checked(
    request: Request[Any, Any, Any], account_pages: AccountPages, viewer: Viewer, purpose: str
) -> dict[str, str]:
    fields = await form_fields(request)
    page_forms.check_form_token(account_pages, purpose, viewer.session_id, fields.get("csrf", ""))
    return fields


@get("/", opt=PAGE)
async def security_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user = viewer.user
    done = request.query_params.get("done")
    return render(
        "security.html",
        user=user,
        view=await security_view(account_pages, user),
        passkeys=await passkeys_view(account_pages, user),
        school_name=await school_name(account_pages, user),
        done=done if done in DONE else None,
        passkey_script=True,
        scripts=True,
    )


@get("/totp", opt=PAGE, guards=[recent_sign_in])
async def totp_page(request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    session_id, user = viewer
    enrolment = await begin_totp(account_pages, user, by=session_id)
    return render(
        "enrol.html",
        action=f"{PATH}/totp",
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
        error=WRONG_ENROLMENT_CODE if request.query_params.get("failed") else None,
        qr=qr_svg(enrolment.uri, label="QR code to set up your authenticator app"),
        secret=enrolment.secret,
        required=False,
        back=PATH,
    )


@post("/totp", opt={**PAGE, "back": f"{PATH}/totp"}, guards=[recent_sign_in])
async def totp_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await _checked(request, account_pages, viewer, PURPOSE)
    codes = await add_totp(
        account_pages, viewer.user, fields.get("code", ""), ip=client_ip(request), agent=client_agent(request)
    )
    if codes is None:
        return see_other(f"{PATH}/totp?failed=1")
    await account_pages.second_steps.keep_codes(_codes_key(viewer.session_id), codes)
    return see_other(f"{PATH}/codes?new=1")


@get("/codes", opt=PAGE)
async def codes_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    """New recovery codes, once: a second look finds none and goes back to the page."""
    next_page = request.query_params.get("next")
    next_page = next_page if next_page in NEXT_PAGES else PATH
    codes = await account_pages.second_steps.take_codes(_codes_key(viewer.session_id))
    if not codes:
        return see_other(next_page)
    new = {"1": "app", "passkey": "passkey"}.get(request.query_params.get("new") or "")
    return render("recovery_codes.html", codes=codes, new=new, next=next_page)


@get("/confirm", opt=PAGE, guards=[recent_sign_in])
async def confirm_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    action = request.query_params.get("action")
    if action not in ACTIONS:
        raise InvalidRequestError("choose an action from your security page", advice="Go back and try again.")
    view = await security_view(account_pages, viewer.user)
    return render(
        "security_confirm.html",
        action=action,
        view=view,
        csrf=page_forms.form_token(account_pages, PURPOSE, viewer.session_id),
    )


@post("/remove-totp", opt={**PAGE, "back": f"{PATH}/confirm?action=remove-totp"}, guards=[recent_sign_in])
async def remove_totp_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    await _checked(request, account_pages, viewer, PURPOSE)
    await remove_totp(account_pages, viewer.user, ip=client_ip(request), agent=client_agent(request))
    return see_other(f"{PATH}?done=removed")


@post("/renew-codes", opt={**PAGE, "back": f"{PATH}/confirm?action=renew-codes"}, guards=[recent_sign_in])
async def renew_codes_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    await _checked(request, account_pages, viewer, PURPOSE)
    codes = await renew_recovery_codes(account_pages, viewer.user, ip=client_ip(request), agent=client_agent(request))
    await account_pages.second_steps.keep_codes(_codes_key(viewer.session_id), codes)
    return see_other(f"{PATH}/codes")


ROUTER = Router(
    PATH,
    route_handlers=[
        security_page,
        totp_page,
        totp_submit,
        codes_page,
        confirm_page,
        remove_totp_submit,
        renew_codes_submit,
    ],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)


@get("/", opt=PAGE)
async def school_security_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    rule = await two_step_rule(account_pages, user)
    return render(
        "school_security.html",
        user=user,
        rule=rule,
        rules=TWO_STEP_RULES,
        school_name=await school_name(account_pages, user),
        csrf=page_forms.form_token(account_pages, SCHOOL_PURPOSE, session_id),
        done=request.query_params.get("done") == "1",
    )


@post("/", opt={**PAGE, "back": SCHOOL_PATH}, guards=[recent_sign_in])
async def school_security_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await _checked(request, account_pages, viewer, SCHOOL_PURPOSE)
    await require_two_step(account_pages, viewer.user, fields.get("required", ""), ip=client_ip(request))
    return see_other(f"{SCHOOL_PATH}?{urlencode({'done': '1'})}")


SCHOOL_ROUTER = Router(
    SCHOOL_PATH,
    route_handlers=[school_security_page, school_security_submit],
    dependencies={"viewer": signed_in_viewer(SCHOOL_PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
