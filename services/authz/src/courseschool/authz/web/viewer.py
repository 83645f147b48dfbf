"""Who is signed in on this browser, for the account pages: each page's `viewer`
(`signed_in_viewer`), or the sign-in page instead of the page (`SignInFirst`,
`to_sign_in`), which leads back to it afterwards."""

from __future__ import annotations

from typing import Any, NamedTuple

from litestar import Request, Response
from litestar.di import NamedDependency, Provide

from ..endpoints.signin import signed_in_user
from ..protocol.models import User
from .cookies import session_cookie_name
from .http import AccountPagesDep
from .pages import see_other
from .signin import signin_url


class Viewer(NamedTuple):
    """The signed-in person looking at an account page, and their browser's session."""

    session_id: str
    user: User


SignedIn = NamedDependency[Viewer]  # an account page's `viewer`


class SignInFirst(Exception):
    """Nobody is signed in on this browser: the answer is the sign-in page, which leads
    back to `page` afterwards (`to_sign_in`)."""

    def __init__(self, page: str) -> None:
        super().__init__(page)
        self.page = page


def to_sign_in(_: Request[Any, Any, Any], exc: SignInFirst) -> Response[Any]:
    return see_other(signin_url(exc.page))


def signed_in_viewer(page: str) -> Provide:
    """The `viewer` dependency of the account pages under `page`: this browser's person,
    or the sign-in page instead of the handler (with `to_sign_in` as the router's
    handler of `SignInFirst`)."""

    async def provide_viewer(request: Request[Any, Any, Any], account_pages: AccountPagesDep) -> Viewer:
        session_id = request.cookies.get(session_cookie_name(account_pages.settings))
        user = await signed_in_user(account_pages, session_id)
        if user is None or session_id is None:
            raise SignInFirst(page)
        return Viewer(session_id, user)

    return Provide(provide_viewer)
