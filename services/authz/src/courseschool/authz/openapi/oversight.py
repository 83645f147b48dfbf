"""The OpenAPI description of the pages added for oversight: the confirmations of ending
one sign-in of an app and of removing an app everywhere (the connected-apps page), and
the school's apps page of a school's owners and admins with its actions. Pages for a
browser: HTML, forms, 303s; each form bound to the sign-in session by its CSRF token."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

from .account import (
    _COMMON,
    _CSRF,
    _FORGED,
    _GATEWAY,
    _GRANT_ID,
    _error_page,
    _form,
    _page,
    _page_or_refused_path,
    _see_other,
)

_GRANT = {
    "name": "grant_id",
    "in": "path",
    "required": True,
    "description": "The sign-in (grant), as the page's link names it.",
    "schema": {"type": "string"},
    "example": _GRANT_ID,
}
_NOT_YOURS = _page_or_refused_path(
    _error_page(
        "Not a live sign-in of this person (another person's, unknown, or ended already): an HTML page",
        "There is no such access to remove: it may have been removed already.",
    )
)
_TO_SIGN_IN = _see_other("Not signed in: to the sign-in page", "/oauth/signin?next=%2Foauth%2Fapps")
_CLIENT_ID = {
    "type": "string",
    "description": "The app's client id (a metadata document's client id is a URL, so it is a field).",
    "examples": ["hT3kq9XbV2mPz8Lr4sWd1Q"],
}
_PERSON = {"type": "string", "description": "The person whose access ends (their id).", "examples": [_GRANT_ID]}
_NO_PAGE = _error_page(
    "Not an owner or admin of a school, or no such access at the school: an HTML page",
    "There is no such page.",
)


def _confirmation(operation: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "get": {
            **_COMMON,
            "operationId": operation,
            "summary": summary,
            "description": description,
            "parameters": [_GRANT],
            "responses": {
                "200": _page("The confirmation, naming the app (and the computer or browser)", summary),
                "303": _TO_SIGN_IN,
                "404": _NOT_YOURS,
                **_GATEWAY,
                **unexpected_response(),
            },
        }
    }


def _school_action(operation: str, summary: str, description: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            **_COMMON,
            "operationId": operation,
            "summary": summary,
            "description": description,
            "requestBody": _form("The confirmation page's form", {"csrf": _CSRF, **fields}, ["csrf", "client_id"]),
            "responses": {
                "303": _see_other("Done: back to the school's apps, which say what changed", "/oauth/school/apps"),
                "403": _FORGED,
                "404": _NO_PAGE,
                **error_responses(503),
                **unexpected_response(),
            },
        }
    }


def oversight_paths() -> dict[str, Any]:
    remove_app = _confirmation(
        "confirm_remove_app",
        "Remove the app everywhere?",
        "Lists every sign-in of the app the grant belongs to; its form ends them all.",
    )
    remove_app["post"] = {
        **_COMMON,
        "operationId": "remove_app_everywhere",
        "summary": "Remove an app everywhere",
        "description": "Ends every live sign-in of the app the grant belongs to, at once.",
        "parameters": [_GRANT],
        "requestBody": _form("The confirmation page's form", {"csrf": _CSRF}, ["csrf"]),
        "responses": {
            "303": _see_other("Removed: back to the list, which names what ended", f"/oauth/apps?removed={_GRANT_ID}"),
            "403": _FORGED,
            "404": _NOT_YOURS,
            **error_responses(503),
            **unexpected_response(),
        },
    }
    school_page = {
        **_COMMON,
        "operationId": "school_apps",
        "summary": "The school's apps",
        "description": "For a school's owners and admins: every app anyone at the school connected, who let it "
        "in (name, role), what it may do, when it was last used and what it did in the last 30 days; "
        "the apps the school blocked. Anyone else: 404.",
        "responses": {
            "200": _page("The school's apps", "Apps connected at Demo Course School"),
            "303": _TO_SIGN_IN,
            "404": _NO_PAGE,
            **_GATEWAY,
            **unexpected_response(),
        },
    }
    confirm = {
        **_COMMON,
        "operationId": "confirm_school_action",
        "summary": "Confirm an action on an app of the school",
        "description": "Names the app (and the person) and what the action does; its form posts the action.",
        "parameters": [
            {"name": "action", "in": "query", "required": True, "description": "What to do.",
             "schema": {"type": "string", "enum": ["end-person", "end-all", "block"]}, "example": "block"},
            {"name": "client_id", "in": "query", "required": True, "description": "The app.",
             "schema": {"type": "string"}, "example": "hT3kq9XbV2mPz8Lr4sWd1Q"},
            {"name": "person", "in": "query", "required": False, "description": "With end-person: whose access.",
             "schema": {"type": "string"}, "example": _GRANT_ID},
        ],
        "responses": {
            "200": _page("The confirmation", "Block Roster Agent for Demo Course School?"),
            "303": _TO_SIGN_IN,
            "400": _error_page("No such action, or a person who holds no access to the app", "Go back and try again."),
            "404": _NO_PAGE,
            **_GATEWAY,
            **unexpected_response(),
        },
    }  # fmt: skip
    return {
        "/oauth/apps/{grant_id}/end": _confirmation(
            "confirm_end_sign_in",
            "End this sign-in?",
            "Names the app, the computer or browser, when it was approved and last used; its form ends it.",
        ),
        "/oauth/apps/{grant_id}/remove-app": remove_app,
        "/oauth/school/apps": {"get": school_page},
        "/oauth/school/apps/confirm": {"get": confirm},
        "/oauth/school/apps/end": _school_action(
            "end_school_access",
            "End one person's access to an app, or everyone's at the school",
            "Ends the sign-ins at once; the app would have to ask again.",
            {"client_id": _CLIENT_ID, "person": _PERSON},
        ),
        "/oauth/school/apps/block": _school_action(
            "block_app_for_school",
            "Block an app for the school",
            "Ends its sign-ins at the school; no one there may allow it again; its consent page says so.",
            {"client_id": _CLIENT_ID},
        ),
        "/oauth/school/apps/unblock": _school_action(
            "unblock_app_for_school",
            "Unblock an app",
            "People at the school may allow it again.",
            {"client_id": _CLIENT_ID},
        ),
    }
