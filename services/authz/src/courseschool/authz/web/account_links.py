"""The pages of e-mailed links (endpoints/account_links.py):

- GET /oauth/password/forgot: "Forgot your password?", an address to send a link to;
  POST answers the same page whether or not the address has an account (`?sent=1`).
- GET /oauth/password/choose?token=...: the link as e-mailed. A usable link's token is
  held for this browser (its `cs_link` cookie, storage/held_links.py, a few minutes) and
  the answer is a redirect to /oauth/password/choose without it, so no access log,
  history entry or later redirect carries the token (and none is ever made with one).
- GET /oauth/password/choose: the link's page, where the person chooses a password (an
  invitation's first, or a new one); POST sets it and signs the browser in, or leads to
  /oauth/password/done when a second step is the person's. A link used, expired,
  unknown or another person's, or none held for this browser: a page saying which, and
  nothing changed.

No session exists yet, so each form's CSRF token is bound to a cookie of these pages'
own (as the sign-in page's): another site can neither post a reset for someone nor sign
this browser in to an account of its choosing."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response, get, post
from litestar.datastructures import Cookie

from courseschool.common.answers import PAGE
from courseschool.common.errors import ForbiddenError, InvalidRequestError
from courseschool.common.secrets import new_token

from ..endpoints.account import PASSWORDS_DIFFER
from ..endpoints.account_links import LinkRefused, choose_password, forgot_password, usable_link
from ..endpoints.signin import signed_in_user
from ..families import AccountPages
from ..storage.mail_outbox import INVITATION
from . import page_forms
from .cookies import session_cookie, session_cookie_name
from .http import AccountPagesDep, client_agent, client_ip
from .interaction import form_fields
from .pages import render, see_other

PATH = "/oauth/password"
FORGOT = f"{PATH}/forgot"
CHOOSE = f"{PATH}/choose"
DONE = f"{PATH}/done"
LINK_COOKIE = "cs_link"
FORGOT_PURPOSE = "forgot-password"
CHOOSE_PURPOSE = "choose-password"
REFUSED_STATUS = {"unknown": 404, "used": 410, "expired": 410, "other_person": 409}
CHOICE_ERRORS = {"differ": PASSWORDS_DIFFER, "rule": "A password must be 10 to 1024 characters long."}


def _binding(request: Request[Any, Any, Any]) -> str:
    value = request.cookies.get(LINK_COOKIE)
    return value if value and len(value) <= 128 else new_token()


def _link_cookie(account_pages: AccountPages, value: str) -> Cookie:
    return Cookie(
        key=LINK_COOKIE,
        value=value,
        path=PATH,
        httponly=True,
        secure=account_pages.settings.cookie_secure,
        samesite="lax",
        max_age=account_pages.settings.interaction_ttl,
    )


async def _checked(request: Request[Any, Any, Any], account_pages: AccountPages, purpose: str) -> dict[str, str]:
    fields = await form_fields(request)
    binding = request.cookies.get(LINK_COOKIE)
    if not binding:
        raise ForbiddenError(page_forms.NOT_FROM_THIS_PAGE)
    page_forms.check_form_token(account_pages, purpose, binding, fields.get("csrf", ""))
    return fields


@get(FORGOT, opt=PAGE)
async def forgot_page(request: Request[Any, Any, Any], account_pages: AccountPagesDep) -> Response[Any]:
    binding = _binding(request)
    return render(
        "forgot_password.html",
        csrf=page_forms.form_token(account_pages, FORGOT_PURPOSE, binding),
        sent=request.query_params.get("sent") == "1",
        minutes=account_pages.settings.password_reset_ttl // 60,
        cookies=[_link_cookie(account_pages, binding)],
    )


@post(FORGOT, opt=PAGE)
async def forgot_submit(request: Request[Any, Any, Any], account_pages: AccountPagesDep) -> Response[Any]:
    fields = await _checked(request, account_pages, FORGOT_PURPOSE)
    await forgot_password(account_pages, fields.get("email", ""), ip=client_ip(request))
    return see_other(f"{FORGOT}?sent=1")


async def _signed_in_as(request: Request[Any, Any, Any], account_pages: AccountPages) -> str | None:
    user = await signed_in_user(account_pages, request.cookies.get(session_cookie_name(account_pages.settings)))
    return user.id if user else None


def _refused(exc: LinkRefused) -> Response[Any]:
    return render("link_refused.html", status=REFUSED_STATUS[exc.why], why=exc.why, forgot=FORGOT)


@get(CHOOSE, opt=PAGE)
async def choose_page(request: Request[Any, Any, Any], account_pages: AccountPagesDep) -> Response[Any]:
    signed_in_as = await _signed_in_as(request, account_pages)
    if "token" in request.query_params:  # the link as e-mailed: held, then out of the URL
        token = request.query_params.get("token") or ""
        try:
            await usable_link(account_pages, token, signed_in_as=signed_in_as)
        except LinkRefused as exc:
            return _refused(exc)
        binding = _binding(request)
        await account_pages.held_links.hold(binding, token)
        return see_other(CHOOSE, cookies=[_link_cookie(account_pages, binding)])
    binding = _binding(request)
    try:
        link = await usable_link(account_pages, await _held(request, account_pages), signed_in_as=signed_in_as)
    except LinkRefused as exc:
        return _refused(exc)
    return render(
        "choose_password.html",
        invitation=link.purpose == INVITATION,
        email=link.email,
        csrf=page_forms.form_token(account_pages, CHOOSE_PURPOSE, binding),
        error=CHOICE_ERRORS.get(request.query_params.get("failed") or ""),
        cookies=[_link_cookie(account_pages, binding)],
    )


async def _held(request: Request[Any, Any, Any], account_pages: AccountPages) -> str:
    """The token of the link this browser opened ("": none, which no link is)."""
    return await account_pages.held_links.held(request.cookies.get(LINK_COOKIE)) or ""


@post(CHOOSE, opt=PAGE)
async def choose_submit(request: Request[Any, Any, Any], account_pages: AccountPagesDep) -> Response[Any]:
    fields = await _checked(request, account_pages, CHOOSE_PURPOSE)
    # A page the previous release served carries the token in its form.
    token = await _held(request, account_pages) or fields.get("token", "")
    try:
        chosen = await choose_password(
            account_pages,
            token,
            fields.get("password", ""),
            fields.get("again", ""),
            signed_in_as=await _signed_in_as(request, account_pages),
            ip=client_ip(request),
            agent=client_agent(request),
        )
    except LinkRefused as exc:
        return _refused(exc)
    except InvalidRequestError as exc:  # the password: the link stays usable (and held)
        failed = "differ" if exc.description == PASSWORDS_DIFFER else "rule"
        return see_other(f"{CHOOSE}?{urlencode({'failed': failed})}")
    await account_pages.held_links.drop(request.cookies.get(LINK_COOKIE) or "")
    if chosen.session_id is None:
        return see_other(f"{DONE}?{urlencode({'invited': '1' if chosen.purpose == INVITATION else '0'})}")
    cookie = session_cookie(account_pages.settings, chosen.session_id, account_pages.settings.session_ttl)
    done = "welcome" if chosen.purpose == INVITATION else "reset"
    return see_other(f"/oauth/account?{urlencode({'done': done})}", cookies=[cookie])


@get(DONE, opt=PAGE)
async def done_page(request: Request[Any, Any, Any]) -> Response[Any]:
    """The password is set; the person signs in with it (and their second step)."""
    return render("password_set.html", invited=request.query_params.get("invited") == "1")


ROUTES = [forgot_page, forgot_submit, choose_page, choose_submit, done_page]
