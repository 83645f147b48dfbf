"""The cookies of a browser's sign-in: the login session's, and the one that binds an
interaction to the browser that started it."""

from __future__ import annotations

from litestar.datastructures import Cookie

from ..settings import AuthzSettings

BINDING_COOKIE = "cs_interaction"


def session_cookie_name(settings: AuthzSettings) -> str:
    return "__Host-cs_session" if settings.cookie_secure else "cs_session"


def session_cookie(settings: AuthzSettings, session_id: str, max_age: int) -> Cookie:
    """The login session's cookie (max_age 0 with an empty value drops it)."""
    return Cookie(
        key=session_cookie_name(settings),
        value=session_id,
        path="/",
        httponly=True,
        secure=settings.cookie_secure,
        samesite="lax",
        max_age=max_age,
    )


def binding_cookie(settings: AuthzSettings, uid: str, value: str, max_age: int) -> Cookie:
    return Cookie(
        key=BINDING_COOKIE,
        value=value,
        path=f"/oauth/interaction/{uid}",
        httponly=True,
        secure=settings.cookie_secure,
        samesite="lax",
        max_age=max_age,
    )
