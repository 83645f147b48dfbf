"""The browser's endpoints: the authorization request's parameters, error pages, sign-out (RP-Initiated Logout)."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

from .schemas import _CALLBACK, _CLIENT_ID, _LOCATION, _SCOPE, TAG, _form, _s

_ERROR_PAGE = {
    "description": "Unknown client or redirect URI, or a malformed request before the client is "
    "known: an HTML error page, never a redirect",
    "content": {
        "text/html": {
            "schema": {"type": "string"},
            "example": "<!doctype html><html><body><p>This sign-in request cannot be "
            "used: unknown client.</p></body></html>",
        }
    },
}
_BAD_FORM = {
    400: {"error": "invalid_request", "error_description": "the request body must be application/x-www-form-urlencoded"}
}
_BAD_CLIENT = {401: {"error": "invalid_client", "error_description": "client authentication failed"}}
_CLIENT_401 = {401: "The client is unknown or failed to authenticate (`invalid_client`)"}


def _query(
    name: str, description: str, example: str, required: bool = False, enum: list[str] | None = None
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **({"enum": enum} if enum else {})}
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
        "example": example,
    }


_AUTHORIZE_PARAMS = (
    ("response_type", "Always `code`.", "code", True, ["code"]),
    ("client_id", "From registration (or a Client ID Metadata Document URL).", _CLIENT_ID, True, None),
    ("redirect_uri", "A registered redirect URI (a loopback port may differ).", _CALLBACK, True, None),
    ("scope", "Space-separated scopes.", _SCOPE, True, None),
    (
        "code_challenge",
        "PKCE S256 challenge of the code_verifier.",
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        True,
        None,
    ),
    ("code_challenge_method", "Always `S256`.", "S256", True, ["S256"]),
    ("state", "Opaque value echoed on the redirect.", "af0ifjsldkj", False, None),
    ("nonce", "Echoed in the ID token.", "n-0S6_WzA2Mj", False, None),
    (
        "resource",
        "RFC 8707 resource indicator: the API's identifier, the server's origin.",
        "https://school.example",
        False,
        None,
    ),
    ("prompt", "`none`, `login`, `consent` or `select_account`.", "consent", False, None),
    ("max_age", "Seconds since the last sign-in beyond which the user signs in again.", "3600", False, None),
    ("login_hint", "Pre-fills the email field.", "ada@example.com", False, None),
    (
        "dpop_jkt",
        "RFC 9449 §10: the thumbprint (RFC 7638) of the client's DPoP key; the code is then exchanged only with a "
        "proof made with that key.",
        "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I",
        False,
        None,
    ),
)


_LOGOUT_PARAMS = (
    (
        "id_token_hint",
        "An ID token this server issued to the client (expired ones are accepted); required with "
        "post_logout_redirect_uri (RP-Initiated Logout §3).",
        "eyJhbGci...",
        False,
        None,
    ),
    (
        "client_id",
        "The client, when no id_token_hint is sent. Only clients already known here are looked up (a metadata "
        "document is never fetched); an unknown one is shown no name and gets no redirect.",
        _CLIENT_ID,
        False,
        None,
    ),
    (
        "post_logout_redirect_uri",
        "Where to send the browser after the person confirmed: one of the client's redirect URIs (a loopback port "
        "may differ), with id_token_hint. Without a session the signed-out page links to it; nothing redirects.",
        _CALLBACK,
        False,
        None,
    ),
    ("state", "Opaque value echoed on that redirect (or link).", "af0ifjsldkj", False, None),
)


def _logout_operations() -> dict[str, Any]:
    """OpenID Connect RP-Initiated Logout 1.0 §2: the end_session_endpoint."""
    page = {
        "description": "A page: the confirmation, or that the person is signed out",
        "content": {
            "text/html": {
                "schema": {"type": "string"},
                "example": "<!doctype html><html><body><h1>Sign out of Course School?</h1></body></html>",
            }
        },
    }
    back = {
        "description": "Signed out after the confirmation: back to `post_logout_redirect_uri` with `state`",
        "headers": {"Location": {**_LOCATION, "example": f"{_CALLBACK}?state=af0ifjsldkj"}},
    }
    too_many = {
        **_ERROR_PAGE,
        "description": "Too many sign-out requests from this address (RATE_LOGOUT_PER_IP): an HTML page",
        "headers": error_responses(429)["429"]["headers"],
    }
    common = {"tags": [TAG], "security": [{}]}
    return {
        "get": {
            **common,
            "operationId": "end_session",
            "summary": "Sign out (OpenID Connect RP-Initiated Logout)",
            "description": "Open this in the user's browser. The person is asked to confirm; the browser then goes "
            "to `post_logout_redirect_uri` (registered for the client named by `id_token_hint`) with `state`. "
            "Not signed in: the signed-out page, with a link back. Tokens are not revoked: revoke them at the "
            "revocation endpoint.",
            "parameters": [_query(*p) for p in _LOGOUT_PARAMS],
            "responses": {
                "200": page,
                "400": _ERROR_PAGE,
                "429": too_many,
                **error_responses(503),
                **unexpected_response(),
            },
        },
        "post": {
            **common,
            "operationId": "end_session_post",
            "summary": "Sign out, form-encoded; with the page's `csrf` field, the confirmation",
            "description": "The same parameters as GET in a form body. The confirmation page posts here with its "
            "`csrf` field, which ends the session.",
            "requestBody": _form("The sign-out request", {name: _s(d, e) for name, d, e, *_ in _LOGOUT_PARAMS}, []),
            "responses": {
                "200": page,
                "303": back,
                "400": _ERROR_PAGE,
                "403": {**_ERROR_PAGE, "description": "A form not sent from the confirmation page: an HTML page"},
                "429": too_many,
                **error_responses(503),
                **unexpected_response(),
            },
        },
    }
