"""The OpenAPI description of a person's account pages (issue 40): the account page (a
new password, the browsers signed in now, sign out everywhere else), the confirmation a
change asks for, and the pages of e-mailed links (Forgot your password?, choosing a
password). Pages for a browser: HTML, forms, 303s; each form bound to the session, or,
before there is one, to a cookie of the link pages' own, by its CSRF token."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

from .account import _COMMON, _CSRF, _FORGED, _GATEWAY, _error_page, _form, _page, _see_other
from .security import _TOO_MANY, _get, _post

_CONFIRM_FIRST = _see_other(
    "No recent sign-in (RECENT_SIGN_IN): to the confirmation page, then back; or, not signed in, to the sign-in page",
    "/oauth/account/confirm?next=%2Foauth%2Faccount",
)
_PASSWORD = {
    "type": "string",
    "description": "The new password: 10 to 1024 characters.",
    "examples": ["a long passphrase"],
}
_AGAIN = {"type": "string", "description": "The same password again.", "examples": ["a long passphrase"]}
_TOKEN = {
    "type": "string",
    "description": "The link's token, as the e-mail's link carries it.",
    "examples": ["q3Zt0mYx1rW8bKp2nVd5sLc7fHj9gAe4uIo6yTr0eQw"],
}
_REFUSED = {
    "404": _error_page(
        "No such link (mistyped, or cut short): an HTML page; nothing changes", "This link is not valid"
    ),
    "409": _error_page(
        "The browser is signed in as another person: an HTML page; nothing changes", "This link is for another account"
    ),
    "410": _error_page("The link was used, or expired: an HTML page; nothing changes", "This link has expired"),
}


def _anonymous(
    operation: str, summary: str, description: str, responses: dict[str, Any], **more: Any
) -> dict[str, Any]:
    return {
        **_COMMON,
        "operationId": operation,
        "summary": summary,
        "description": description,
        **more,
        "responses": {**responses, **_GATEWAY, **unexpected_response()},
    }


def _account_paths() -> dict[str, Any]:
    return {
        "/oauth/account": {
            "get": _get(
                "account_page",
                "Your account",
                "A new password, the browsers signed in now (browser, address, last seen) with sign out everywhere "
                "else, and links to the connected apps and the sign-in security page.",
                _page("The account page", "Your account"),
            )
        },
        "/oauth/account/password": {
            "post": _post(
                "change_password",
                "Change the password",
                "Needs a recent sign-in; the person's other browsers are signed out, and they are told by e-mail.",
                {"password": _PASSWORD, "again": _AGAIN},
                _see_other(
                    "Changed (or refused: back to the page, which says why), or the confirmation first",
                    "/oauth/account?done=password",
                ),
                responses=error_responses(503),
            )
        },
        "/oauth/account/sign-out-others": {
            "post": _post(
                "sign_out_elsewhere",
                "Sign out everywhere else",
                "Needs a recent sign-in; every session of the person but this browser's ends; told by e-mail.",
                {},
                _see_other("Done, or the confirmation first", "/oauth/account?done=signed-out"),
                responses=error_responses(503),
            )
        },
    }


def _confirm_paths() -> dict[str, Any]:
    return {
        "/oauth/account/confirm": {
            "get": _get(
                "confirm_identity_page",
                "Confirm it's you",
                "The password, or a code of the person's authenticator app, entered again before a change.",
                _page("The confirmation page", "Confirm it's you"),
                parameters=[_next_param()],
            ),
            "post": _post(
                "confirm_identity",
                "Enter the password or a code again",
                "Counts like a sign-in (rate limit, lockout); right: the session counts as a recent sign-in.",
                {
                    "password": {**_AGAIN, "description": "The password (or leave empty and send `code`)."},
                    "next": {
                        "type": "string",
                        "description": "Where to go back to: one of the account's own pages.",
                        "examples": ["/oauth/account"],
                    },
                },
                _see_other(
                    "Confirmed: back to `next`; or to the page again, which says it was not right", "/oauth/account"
                ),
                responses={"429": _TOO_MANY, **error_responses(503)},
            ),
        },
    }


def _next_param() -> dict[str, Any]:
    return {
        "name": "next",
        "in": "query",
        "required": False,
        "description": "Where to go back to afterwards: one of the account's own pages (anything else: the account).",
        "schema": {"type": "string"},
        "example": "/oauth/account",
    }


def _forgot_paths() -> dict[str, Any]:
    return {
        "/oauth/password/forgot": {
            "get": _anonymous(
                "forgot_password_page",
                "Forgot your password?",
                "The address to send a link to; with `sent=1`, the answer every address gets.",
                {"200": _page("The page", "Forgot your password?")},
            ),
            "post": {
                **_COMMON,
                "operationId": "forgot_password",
                "summary": "Send a link to choose a new password",
                "description": "The same answer, after the same work, whether or not the address has an account; a "
                "link valid PASSWORD_RESET_TTL goes to an account's address.",
                "requestBody": _form(
                    "The page's form",
                    {
                        "csrf": _CSRF,
                        "email": {
                            "type": "string",
                            "description": "The address typed in.",
                            "examples": ["ana@school.example"],
                        },
                    },
                    ["csrf", "email"],
                ),
                "responses": {
                    "303": _see_other(
                        "The same page, saying a link was sent if the address has an account",
                        "/oauth/password/forgot?sent=1",
                    ),
                    "403": _FORGED,
                    "429": _TOO_MANY,
                    **unexpected_response(),
                },
            },
        },
    }


def _choose_paths() -> dict[str, Any]:
    token_param = {
        "name": "token",
        "in": "query",
        "required": True,
        "description": "The link's token (single use).",
        "schema": {"type": "string"},
        "example": _TOKEN["examples"][0],
    }
    return {
        "/oauth/password/choose": {
            "get": _anonymous(
                "choose_password_page",
                "The page of an e-mailed link",
                "Choose a password: an invitation's first, or a new one. A link used, expired, unknown or another "
                "person's: a page saying which.",
                {"200": _page("The link's page", "Choose a new password"), **_REFUSED},
                parameters=[token_param],
            ),
            "post": {
                **_COMMON,
                "operationId": "choose_password",
                "summary": "Set the password through the link",
                "description": "Spends the link; the person's sessions and grants end; this browser is signed in, "
                "or, when a second step is theirs, asked to sign in with the new password.",
                "requestBody": _form(
                    "The page's form",
                    {"csrf": _CSRF, "token": _TOKEN, "password": _PASSWORD, "again": _AGAIN},
                    ["csrf", "token", "password", "again"],
                ),
                "responses": {
                    "303": _see_other(
                        "Signed in: the account page; or /oauth/password/done; or back, the password refused",
                        "/oauth/account?done=reset",
                    ),
                    "403": _FORGED,
                    **_REFUSED,
                    **unexpected_response(),
                },
            },
        },
        "/oauth/password/done": {
            "get": _anonymous(
                "password_set_page",
                "The password is set",
                "After a link, where the person has a second step: sign in with the new password.",
                {"200": _page("The page", "Your password is set")},
            )
        },
    }


def people_paths() -> dict[str, Any]:
    return {**_account_paths(), **_confirm_paths(), **_forgot_paths(), **_choose_paths()}
