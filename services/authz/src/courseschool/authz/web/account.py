"""GET /oauth/account: the signed-in person's account: a new password, the browsers
signed in now (device, address, last seen) with "sign out everywhere else", and links to
their connected apps and sign-in security. Each change (POST /oauth/account/password,
/oauth/account/sign-out-others) needs a recent sign-in (web/recent_sign_in.py) and is
told to the person by e-mail; GET and POST /oauth/account/confirm is where the password
or a code is entered again. Every form bound to the session by its CSRF token, 303
after every POST. Not signed in: the sign-in page, and back here afterwards."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response, Router, get, post

from courseschool.common.answers import PAGE
from courseschool.common.errors import InvalidRequestError

from ..endpoints.account import (
    NOT_CONFIRMED,
    PASSWORDS_DIFFER,
    account_view,
    change_password,
    confirm_identity,
    sign_out_elsewhere,
)
from ..endpoints.password_reset import PASSWORD_RULE
from . import page_forms
from .connected_apps import moment
from .http import AccountPagesDep, client_agent, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .recent_sign_in import CONFIRM_PATH, ConfirmFirst, recent_sign_in, safe_back, to_confirm
from .viewer import SignedIn, SignInFirst, signed_in_viewer, to_sign_in

PATH = "/oauth/account"
PURPOSE = "account"  # the forms' CSRF purpose
CONFIRM_PURPOSE = "account-confirm"
DONE = {
    "password": "Your password was changed. Your other browsers were signed out.",
    "signed-out": "Your other browsers were signed out.",
    "welcome": "Welcome to Course School: your password is set and you are signed in.",
    "reset": "Your new password is set. Every other sign-in and app connection of your account has ended.",
}
PASSWORD_ERRORS = {"differ": PASSWORDS_DIFFER, "rule": "A password must be 10 to 1024 characters long."}


@get("/", opt=PAGE)
async def account_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    view = await account_view(account_pages, user, session_id)
    return render(
        "account.html",
        view=view,
        browsers=[(b, moment(b.signed_in_at), moment(b.last_seen_at)) for b in view.browsers],
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
        done=DONE.get(request.query_params.get("done") or ""),
        passkeys_stay=request.query_params.get("done") in ("reset", "password"),  # a new password keeps them
        error=PASSWORD_ERRORS.get(request.query_params.get("failed") or ""),
        scripts=True,
    )


async def _checked(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, session_id: str, purpose: str
) -> dict[str, str]:
    fields = await form_fields(request)
    page_forms.check_form_token(account_pages, purpose, session_id, fields.get("csrf", ""))
    return fields


@post("/password", opt={**PAGE, "back": PATH}, guards=[recent_sign_in])
async def password_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await _checked(request, account_pages, viewer.session_id, PURPOSE)
    try:
        await change_password(
            account_pages,
            viewer.user,
            viewer.session_id,
            fields.get("password", ""),
            fields.get("again", ""),
            ip=client_ip(request),
            agent=client_agent(request),
        )
    except InvalidRequestError as exc:
        failed = "differ" if exc.description == PASSWORDS_DIFFER else "rule"
        assert exc.description in (PASSWORDS_DIFFER, PASSWORD_RULE)
        return see_other(f"{PATH}?failed={failed}#password")
    return see_other(f"{PATH}?done=password")


@post("/sign-out-others", opt={**PAGE, "back": PATH}, guards=[recent_sign_in])
async def sign_out_others_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    await _checked(request, account_pages, viewer.session_id, PURPOSE)
    await sign_out_elsewhere(
        account_pages, viewer.user, viewer.session_id, ip=client_ip(request), agent=client_agent(request)
    )
    return see_other(f"{PATH}?done=signed-out")


@get("/confirm", opt=PAGE)
async def confirm_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    view = await account_view(account_pages, user, session_id)
    return render(
        "confirm_identity.html",
        email=user.email,
        has_app=view.has_app,
        next=safe_back(request.query_params.get("next")),
        csrf=page_forms.form_token(account_pages, CONFIRM_PURPOSE, session_id),
        error=NOT_CONFIRMED if request.query_params.get("failed") else None,
    )


@post("/confirm", opt=PAGE)
async def confirm_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await _checked(request, account_pages, viewer.session_id, CONFIRM_PURPOSE)
    next_page = safe_back(fields.get("next"))
    confirmed = await confirm_identity(
        account_pages,
        viewer.user,
        viewer.session_id,
        password=fields.get("password", ""),
        code=fields.get("code", ""),
        ip=client_ip(request),
    )
    if not confirmed:
        return see_other(f"{CONFIRM_PATH}?{urlencode({'next': next_page, 'failed': '1'})}")
    return see_other(next_page)


ROUTER = Router(
    PATH,
    route_handlers=[account_page, password_submit, sign_out_others_submit, confirm_page, confirm_submit],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
