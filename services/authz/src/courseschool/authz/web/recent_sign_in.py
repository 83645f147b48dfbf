"""The one guard of every change to a person's account (the account page, the second
factors of the security page): a recent sign-in, the password or a code entered within
RECENT_SIGN_IN seconds (endpoints/account.recent). Without one, the answer is the
confirmation page (GET /oauth/account/confirm), which leads back afterwards: to the page
asked for (a GET), or to the page of the form (a POST's `opt={"back": ...}`).

Declared on the routes (`guards=[recent_sign_in]`) with `to_confirm` as their router's
handler of `ConfirmFirst`; not signed in at all, the guard lets the route's `viewer`
send the browser to the sign-in page."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from ..endpoints.account import recent
from ..families import AccountPages
from .cookies import session_cookie_name
from .pages import see_other

CONFIRM_PATH = "/oauth/account/confirm"
# The pages a confirmation may lead back to (with their query): the account's own, and
# the school's people page (an owner's invitations).
BACK_PREFIXES = ("/oauth/account", "/oauth/security", "/oauth/school/")


class ConfirmFirst(Exception):
    """No recent sign-in: the confirmation page, then back to `page`."""

    def __init__(self, page: str) -> None:
        super().__init__(page)
        self.page = page


def safe_back(page: str | None) -> str:
    """`page` if it is one of the account's own pages (a path of ours, no other origin),
    else the account page."""
    if not page or not page.startswith("/") or page.startswith("//") or "\\" in page:
        return "/oauth/account"
    parts = urlsplit(page)
    if parts.scheme or parts.netloc or not parts.path.startswith(BACK_PREFIXES):
        return "/oauth/account"
    return page


def confirm_url(page: str) -> str:
    return f"{CONFIRM_PATH}?{urlencode({'next': safe_back(page)})}"


def to_confirm(_: Request[Any, Any, Any], exc: ConfirmFirst) -> Response[Any]:
    return see_other(confirm_url(exc.page))


async def recent_sign_in(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Litestar guard: a recent sign-in on this browser's session, or ConfirmFirst."""
    account_pages: AccountPages = connection.app.state.authz.account_pages
    session_id = connection.cookies.get(session_cookie_name(account_pages.settings))
    session = await account_pages.sessions.get(session_id, now=account_pages.clock.now())
    if session is None:
        return  # nobody signed in: the route's `viewer` answers with the sign-in page
    if recent(account_pages, session):
        return
    if connection.scope.get("method") == "GET":
        query = connection.scope.get("query_string", b"").decode("latin-1")
        raise ConfirmFirst(connection.url.path + (f"?{query}" if query else ""))
    raise ConfirmFirst(handler.opt.get("back", "/oauth/account"))
