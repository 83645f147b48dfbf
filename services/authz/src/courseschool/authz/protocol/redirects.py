"""Redirects back to the client.

RFC 6749 §3.1.2: the redirection endpoint URI may hold a query, which is kept when
parameters are added. §4.1.2 (success: `code`, `state`) and §4.1.2.1 (error:
`error`, `error_description`, `state`), each with RFC 9207 `iss`.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit, urlunsplit

from courseschool.common.errors import OAuthError


def redirect_url(base: str, params: dict[str, str | None]) -> str:
    """Add query parameters to a redirect URI, keeping its own query (§3.1.2)."""
    parts = urlsplit(base)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def code_redirect_url(redirect_uri: str, *, code: str, state: str | None, issuer: str) -> str:
    """§4.1.2 with RFC 9207 §2."""
    return redirect_url(redirect_uri, {"code": code, "state": state, "iss": issuer})


def error_redirect_url(error: OAuthError, redirect_uri: str, state: str | None, issuer: str) -> str:
    """§4.1.2.1 with RFC 9207 §2."""
    return redirect_url(
        redirect_uri,
        {"error": error.error, "error_description": error.description or None, "state": state, "iss": issuer},
    )
