"""The OpenAPI description of the school's app policy and approvals (issue 39), on the
school's apps page of its owners and admins: the policy (owners), approving an app (a
confirmation, then the form), declining a person's request, withdrawing an approval.
Pages for a browser: HTML, forms, 303s; each form bound to the sign-in session by its
CSRF token."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

from .account import _COMMON, _CSRF, _FORGED, _GATEWAY, _error_page, _form, _page, _see_other
from .oversight import _CLIENT_ID, _NO_PAGE, _TO_SIGN_IN

_REQUEST_ID = "0b7f6c1e-3a52-4c8e-9f0d-2e6a1b4c7d90"
_REQUEST = {"type": "string", "description": "A person's pending request (its id).", "examples": [_REQUEST_ID]}
_NOTE = {
    "type": "string",
    "maxLength": 500,
    "description": "A note to the person who asked (optional).",
    "examples": ["Approved for the essay term."],
}
_POLICY = {
    "type": "string",
    "enum": ["anyone", "read_only", "approved_only"],
    "description": "Which apps people at the school may connect.",
    "examples": ["read_only"],
}
_BACK = _see_other("Done: back to the school's apps, which say what changed", "/oauth/school/apps")
_REFUSED = _error_page("An admin may not change an owner's decision (or the policy): an HTML page", "Only an owner…")


_COVER = {
    "type": "string",
    "enum": ["all", "chosen"],
    "description": "Every area, or the `scope` ticked.",
    "examples": ["chosen"],
}
_SCOPE = {
    "type": "array",
    "items": {"type": "string"},
    "description": "With `chosen`: the scopes covered.",
    "examples": [["courses:read", "courses:write"]],
}


def _action(operation: str, summary: str, description: str, fields: dict[str, Any], required: list[str]) -> Any:
    return {
        "post": {
            **_COMMON,
            "operationId": operation,
            "summary": summary,
            "description": description,
            "requestBody": _form("The page's form", {"csrf": _CSRF, **fields}, ["csrf", *required]),
            "responses": {
                "303": _BACK,
                "400": _error_page("Nothing to choose from, or a blocked app: an HTML page", "Go back and choose."),
                "403": {**_FORGED, "description": f"{_FORGED['description']}; or: {_REFUSED['description']}"},
                "404": _NO_PAGE,
                **error_responses(503),
                **unexpected_response(),
            },
        }
    }


def _confirmation(operation: str, summary: str, parameters: list[dict[str, Any]], example: str) -> Any:
    return {
        **_COMMON,
        "operationId": operation,
        "summary": summary,
        "description": "Names the app, what the approval covers (this registration, this URL or this "
        "integration) and the request; its form posts the decision.",
        "parameters": parameters,
        "responses": {
            "200": _page("The confirmation", example),
            "303": _TO_SIGN_IN,
            "404": _NO_PAGE,
            **_GATEWAY,
            **unexpected_response(),
        },
    }


def _query(name: str, description: str, example: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": {"type": "string"}, "example": example}  # fmt: skip


def school_policy_paths() -> dict[str, Any]:
    approve = _confirmation(
        "confirm_school_approval",
        "Confirm approving an app for the school",
        [
            _query("client_id", "The app (or name a request).", "hT3kq9XbV2mPz8Lr4sWd1Q"),
            _query("request", "A person's pending request for an app.", _REQUEST_ID),
        ],
        "Approve Roster Agent for everyone at the school?",
    )
    decline = _confirmation(
        "confirm_decline_request",
        "Confirm declining a person's request",
        [_query("request", "The pending request.", _REQUEST_ID)],
        "Decline Sam's request for Roster Agent?",
    )
    return {
        "/oauth/school/apps/policy": _action(
            "set_school_app_policy",
            "Set which apps people at the school may connect (owners only)",
            "anyone (the default), read_only (apps may read; changes need the school's approval) or "
            "approved_only (only apps the school approved). Holds from every app's next sign-in or refresh.",
            {"policy": _POLICY},
            ["policy"],
        ),
        "/oauth/school/apps/approve": {
            "get": approve,
            **_action(
                "approve_app_for_school",
                "Approve an app for everyone at the school",
                "Covers this client id only; settles the pending requests it covers; each person is told.",
                {"client_id": _CLIENT_ID, "cover": _COVER, "scope": _SCOPE, "request": _REQUEST, "note": _NOTE},
                ["client_id", "cover"],
            ),
        },
        "/oauth/school/apps/decline": {
            "get": decline,
            **_action(
                "decline_app_request",
                "Decline a person's request for an app",
                "The person is told by e-mail, with the note.",
                {"request": _REQUEST, "note": _NOTE},
                ["request"],
            ),
        },
        "/oauth/school/apps/withdraw": _action(
            "withdraw_school_approval",
            "Withdraw the school's approval of an app",
            "Its grants hold only what the policy allows unapproved apps, from their next use.",
            {"client_id": _CLIENT_ID},
            ["client_id"],
        ),
    }
