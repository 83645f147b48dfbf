"""HTML pages of the interactive flow, and the headers every page and redirect carries."""

from __future__ import annotations

from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from litestar import Response
from litestar.datastructures import Cookie

_env = Environment(loader=PackageLoader("courseschool.authz.web", "templates"), autoescape=select_autoescape(["html"]))
STYLESHEET = (files("courseschool.authz.web") / "templates" / "style.css").read_bytes()


def _csp(form_target: str | None) -> str:
    # form-action also governs the redirect that follows a form POST, so the consent
    # page must allow the client's redirect origin.
    form_action = "'self'"
    if form_target:
        parts = urlsplit(form_target)
        form_action += f" {parts.scheme}://{parts.netloc}"
    return (
        "default-src 'none'; style-src 'self'; img-src 'self'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )


def page_headers(form_target: str | None = None) -> dict[str, str]:
    return {
        "Content-Security-Policy": _csp(form_target),
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "Pragma": "no-cache",
        "X-Content-Type-Options": "nosniff",
    }


def render(template: str, *, status: int = 200, form_target: str | None = None, cookies: list[Cookie] | None = None, **ctx: Any) -> Response[str]:
    html = _env.get_template(template).render(**ctx)
    return Response(
        html, status_code=status, media_type="text/html; charset=utf-8", headers=page_headers(form_target),
        cookies=cookies or [],
    )


def error_page(message: str, status: int = 400) -> Response[str]:
    return render("error.html", status=status, message=message)


def see_other(location: str, *, cookies: list[Cookie] | None = None) -> Response[bytes]:
    """303 See Other: after a POST, and for every redirect of the flow."""
    headers = page_headers()
    headers["Location"] = location
    return Response(b"", status_code=303, headers=headers, cookies=cookies or [])
