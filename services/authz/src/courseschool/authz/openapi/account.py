"""The OpenAPI description of the person's own pages on the authorization server: the
standalone sign-in page and the connected apps (every grant the person holds, each
removable). Pages for a browser, like the sign-out endpoint: HTML, forms, 303s."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

TAG = "oauth"
_COMMON = {"tags": [TAG], "security": [{}]}
_CSRF = {
    "type": "string",
    "description": "The form's CSRF token, from the page's hidden `csrf` field.",
    "examples": ["5f1c0e9a4b7d2c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e"],
}
_NEXT = "/oauth/apps"
_GRANT_ID = "3f0b6c1e-9a2d-4c57-8e1f-2b7d9a4c6e80"


def _html(description: str, body: str) -> dict[str, Any]:
    """A page: `body` is its example's content."""
    example = f"<!doctype html><html><body>{body}</body></html>"
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}, "example": example}}}


def _page(description: str, heading: str) -> dict[str, Any]:
    return _html(description, f"<h1>{heading}</h1>")


def _error_page(description: str, message: str) -> dict[str, Any]:
    return _html(description, f'<p class="error" role="alert">{message}</p>')


def _page_or_refused_path(page: dict[str, Any]) -> dict[str, Any]:
    """A 404 with a path parameter: the page, or the router's JSON refusal of an
    ambiguous path (which never reaches the page)."""
    refused = error_responses(404)["404"]["content"]
    return {**page, "content": {**page["content"], **refused}}


def _see_other(description: str, example: str) -> dict[str, Any]:
    location = {"description": "Where the browser goes next.", "schema": {"type": "string"}, "example": example}
    return {"description": description, "headers": {"Location": location}}


def _form(description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    example = {k: p["examples"][0] for k, p in properties.items()}
    return {
        "required": True,
        "description": description,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": properties, "required": required},
                "example": example,
            }
        },
    }


_FORGED = _error_page(
    "The form was not sent from this page (its CSRF token does not match): an HTML page; nothing changes",
    "The form was not sent from this page. Go back and try again.",
)
_GATEWAY = error_responses(
    413, descriptions={413: "Refused at the gateway: the request carried a body over its size limit (a GET needs none)"}
)
_NEXT_PARAM = {
    "name": "next",
    "in": "query",
    "required": False,
    "description": "The page to go to after signing in; only `/oauth/apps` (anything else is ignored).",
    "schema": {"type": "string"},
    "example": _NEXT,
}


def _signin() -> dict[str, Any]:
    fields = {
        "csrf": _CSRF,
        "email": {"type": "string", "description": "The person's email address.", "examples": ["ada@example.com"]},
        "password": {"type": "string", "description": "The person's password.", "examples": ["correct horse"]},
        "next": {"type": "string", "description": "As in the page's address: `/oauth/apps`.", "examples": [_NEXT]},
    }
    return {
        "get": {
            **_COMMON,
            "operationId": "sign_in_page",
            "summary": "Sign in to see your connected apps",
            "description": "A sign-in page of its own, for the person's pages (not part of an authorization "
            "request): the same sign-in, limits and lockout as the authorization flow's login page. Already "
            "signed in: straight on to `next`.",
            "parameters": [
                _NEXT_PARAM,
                {
                    "name": "failed",
                    "in": "query",
                    "required": False,
                    "description": "Set after a wrong email or password: the page says so.",
                    "schema": {"type": "string"},
                    "example": "1",
                },
            ],
            "responses": {
                "200": _page("The sign-in page", "Sign in"),
                "303": _see_other("Already signed in: on to `next`", _NEXT),
                **_GATEWAY,
                **unexpected_response(),
            },
        },
        "post": {
            **_COMMON,
            "operationId": "sign_in",
            "summary": "Sign in (the page's form)",
            "description": "Signs the person in and sets the session cookie. The form is bound to a cookie the "
            "page sets, so no other site can sign a browser in.",
            "requestBody": _form("The sign-in form", fields, ["csrf", "email", "password"]),
            "responses": {
                "303": _see_other(
                    "Signed in: on to `next`; or back to the page, which says the email or password is not right",
                    _NEXT,
                ),
                "403": _FORGED,
                "429": {
                    **_error_page(
                        "Too many sign-ins from this address, or failed ones at this account: an HTML page",
                        "Too many failed sign-ins for this account; try again later (about 30 s).",
                    ),
                    "headers": error_responses(429)["429"]["headers"],
                },
                **error_responses(503),
                **unexpected_response(),
            },
        },
    }


def _apps() -> dict[str, Any]:
    to_signin = _see_other(
        "Not signed in: to the sign-in page, which comes back here", "/oauth/signin?next=%2Foauth%2Fapps"
    )
    removal = {"csrf": _CSRF}
    return {
        "/oauth/apps": {
            "get": {
                **_COMMON,
                "operationId": "connected_apps",
                "summary": "Your connected apps",
                "description": "Every app holding access for the signed-in person, one row per approval: its "
                "name (verified for an administrator's integration, otherwise self-declared), its kind, the "
                "scopes in plain words, when it was approved and last used, and the address it was approved "
                "from; each with a form to remove its access. Needs the sign-in session cookie.",
                "parameters": [
                    {
                        "name": "done",
                        "in": "query",
                        "required": False,
                        "description": "After a removal: `removed` or `removed-all`, which the page confirms.",
                        "schema": {"type": "string", "enum": ["removed", "removed-all"]},
                        "example": "removed",
                    }
                ],
                "responses": {
                    "200": _page("The list (or that no app has access)", "Your connected apps"),
                    "303": to_signin,
                    **_GATEWAY,
                    **unexpected_response(),
                },
            }
        },
        "/oauth/apps/{grant_id}/remove": {
            "post": {
                **_COMMON,
                "operationId": "remove_connected_app",
                "summary": "Remove one app's access",
                "description": "Revokes the grant at once: its refresh token and access tokens stop working, the "
                "resource servers are told, and consent remembered for the app is forgotten.",
                "parameters": [
                    {
                        "name": "grant_id",
                        "in": "path",
                        "required": True,
                        "description": "The grant, as the page's form names it.",
                        "schema": {"type": "string"},
                        "example": _GRANT_ID,
                    }
                ],
                "requestBody": _form("The page's removal form", removal, ["csrf"]),
                "responses": {
                    "303": _see_other(
                        "Removed (back to the list), or not signed in (to sign in)", "/oauth/apps?done=removed"
                    ),
                    "403": _FORGED,
                    "404": _page_or_refused_path(
                        _error_page(
                            "Not a grant this person holds (another person's, unknown, or removed already): an HTML "
                            "page; a path the gateway refuses before routing (encoded slashes, dot segments, control "
                            "characters in the id) is a JSON error",
                            "There is no such access to remove: it may have been removed already.",
                        )
                    ),
                    **error_responses(503),
                    **unexpected_response(),
                },
            }
        },
        "/oauth/apps/remove-all": {
            "get": {
                **_COMMON,
                "operationId": "confirm_remove_all_connected_apps",
                "summary": "Confirm removing every app's access",
                "description": 'The confirmation page of "Remove all": it names every app it would end and '
                "carries the form that does. Nothing ends until that form is posted. Needs the sign-in session "
                "cookie.",
                "responses": {
                    "200": _page("The confirmation (or that no app has access)", "Remove every app?"),
                    "303": to_signin,
                    **_GATEWAY,
                    **unexpected_response(),
                },
            },
            "post": {
                **_COMMON,
                "operationId": "remove_all_connected_apps",
                "summary": "Remove every app's access",
                "description": "Revokes every grant the signed-in person holds, as removing each would.",
                "requestBody": _form("The confirmation page's remove-all form", removal, ["csrf"]),
                "responses": {
                    "303": _see_other(
                        "Removed (back to the list), or not signed in (to sign in)", "/oauth/apps?done=removed-all"
                    ),
                    "403": _FORGED,
                    **error_responses(503),
                    **unexpected_response(),
                },
            },
        },
    }


def account_paths() -> dict[str, Any]:
    return {"/oauth/signin": _signin(), **_apps()}
