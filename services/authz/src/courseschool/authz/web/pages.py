"""HTML pages of the interactive flow, the headers every page and redirect carries,
and how an error looks as a page (`Pages`, used by `courseschool.common.answers`)."""

from __future__ import annotations

import time
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from litestar import Response, get
from litestar.datastructures import Cookie

from courseschool.common.errors import ForbiddenError, NotFoundError, PlatformError, TooManyRequestsError


def utc_text(epoch: int) -> str:
    """A moment as the pages write it: "23 Nov 2026, 14:21 UTC"."""
    t = time.gmtime(epoch)
    return f"{t.tm_mday} {time.strftime('%b %Y, %H:%M', t)} UTC"


def utc_iso(epoch: int) -> str:
    """The same moment for `<time datetime>`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


_env = Environment(loader=PackageLoader("courseschool.authz.web", "templates"), autoescape=select_autoescape(["html"]))
_env.filters["utc_text"] = utc_text
_env.filters["utc_iso"] = utc_iso
STYLESHEET = (files("courseschool.authz.web") / "templates" / "style.css").read_bytes()
# Our one script: shows the page's <time> elements in the reader's time zone. Served from
# our origin like the stylesheet, allowed only on the pages that load it (`scripts`).
LOCAL_TIME_SCRIPT = (files("courseschool.authz.web") / "templates" / "local-time.js").read_bytes()
LOCAL_TIME_PATH = "/oauth/assets/local-time.js"
# The passkeys' script (navigator.credentials), on the pages that offer a passkey (`passkey_script`).
PASSKEYS_SCRIPT = (files("courseschool.authz.web") / "templates" / "passkeys.js").read_bytes()
PASSKEYS_PATH = "/oauth/assets/passkeys.js"


def _csp(form_target: str | None, scripts: bool = False) -> str:
    # form-action also governs the redirect that follows a form POST, so the consent
    # page must allow the client's redirect origin.
    form_action = "'self'"
    if form_target:
        parts = urlsplit(form_target)
        form_action += f" {parts.scheme}://{parts.netloc}"
    script_src = "script-src 'self'; " if scripts else ""
    return (
        f"default-src 'none'; {script_src}style-src 'self'; img-src 'self'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )


def page_headers(form_target: str | None = None, *, scripts: bool = False) -> dict[str, str]:
    return {
        "Content-Security-Policy": _csp(form_target, scripts),
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "Pragma": "no-cache",
        "X-Content-Type-Options": "nosniff",
    }


def render(
    template: str,
    *,
    status: int = 200,
    form_target: str | None = None,
    cookies: list[Cookie] | None = None,
    scripts: bool = False,
    passkey_script: bool = False,
    **ctx: Any,
) -> Response[str]:
    """`scripts`: the page loads our local-time script (LOCAL_TIME_PATH); `passkey_script`, our
    passkeys' script (PASSKEYS_PATH). Its Content-Security-Policy then allows scripts of
    our origin; no page runs any other script."""
    html = _env.get_template(template).render(
        local_time_script=LOCAL_TIME_PATH if scripts else None,
        passkeys_script=PASSKEYS_PATH if passkey_script else None,
        **ctx,
    )
    return Response(
        html,
        status_code=status,
        media_type="text/html; charset=utf-8",
        headers=page_headers(form_target, scripts=scripts or passkey_script),
        cookies=cookies or [],
    )


class Pages:
    """Errors on the pages' routes, as a person should see them: what happened, what to
    do next, and the technical reason in small print for whoever fixes the app."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def error_page(self, err: PlatformError) -> Response[str]:
        title, advice = _in_words(err)
        details = err.description if err.description and err.description != advice else None
        page = render("error.html", status=err.status_code, title=title, advice=advice, details=details)
        page.headers.update(err.headers)
        return page

    def redirect(self, location: str) -> Response[bytes]:
        return see_other(location)


def _in_words(err: PlatformError) -> tuple[str, str]:
    if isinstance(err, TooManyRequestsError):
        return "Too many attempts", err.advice or f"Wait about {err.retry_after} seconds, then try again."
    if err.status_code == 503:
        return "Course School is busy or partly down", err.advice or "Wait a moment, then try again."
    if err.status_code >= 500:
        return "Something went wrong on our side", err.advice or (
            "Try again. If it keeps happening, tell your school's administrator."
        )
    if isinstance(err, ForbiddenError):
        return "This form can't be used", err.advice or "Go back, reload the page and try again."
    if isinstance(err, NotFoundError) and err.advice:
        return "Not found", err.advice
    return "This sign-in can't continue", err.advice or (
        "Go back to the app and start again. If it keeps happening, the app's developer needs to fix it: "
        "the details below say what is wrong."
    )


def see_other(location: str, *, cookies: list[Cookie] | None = None) -> Response[bytes]:
    """303 See Other: after a POST, and for every redirect of the flow."""
    headers = page_headers()
    headers["Location"] = location
    return Response(b"", status_code=303, headers=headers, cookies=cookies or [])


@get("/oauth/assets/style.css")
async def stylesheet() -> Response[bytes]:
    return Response(STYLESHEET, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})


@get(LOCAL_TIME_PATH)
async def local_time_script() -> Response[bytes]:
    return _script(LOCAL_TIME_SCRIPT)


@get(PASSKEYS_PATH)
async def passkeys_script() -> Response[bytes]:
    return _script(PASSKEYS_SCRIPT)


def _script(body: bytes) -> Response[bytes]:
    return Response(
        body,
        media_type="text/javascript",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )
