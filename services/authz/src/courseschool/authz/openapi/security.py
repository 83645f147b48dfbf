"""The OpenAPI description of two-step sign-in's pages (issue 40): the second step of the
standalone sign-in, the person's sign-in security page (an authenticator app, recovery
codes) and a school's requirement of two-step sign-in. Pages for a browser: HTML, forms,
303s; each form bound to the sign-in session (or the sign-in page's cookie) by its CSRF
token."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, unexpected_response

from .account import _COMMON, _CSRF, _FORGED, _GATEWAY, _error_page, _form, _page, _see_other

_TO_SIGN_IN = _see_other("Not signed in: to the sign-in page", "/oauth/signin?next=%2Foauth%2Fsecurity")
_CODE = {
    "type": "string",
    "description": "Six digits from the authenticator app (RFC 6238), or a recovery code.",
    "examples": ["492039"],
}
_RULE = {
    "type": "string",
    "enum": ["none", "staff", "approvers", "everyone"],
    "description": "Who must sign in in two steps: nobody, owners and admins, anyone whose role may let apps "
    "change the school's data, everyone.",
    "examples": ["staff"],
}
_ROLE = {
    "type": "string",
    "enum": ["admin", "lecturer", "student"],
    "description": "The invited person's role at the school.",
    "examples": ["lecturer"],
}
_NEXT = {
    "name": "next",
    "in": "query",
    "required": False,
    "description": "Where the sign-in goes afterwards (one of our own pages).",
    "schema": {"type": "string"},
    "example": "/oauth/apps",
}
_TOO_MANY = {
    **_error_page(
        "Too many sign-ins from this address, or failed ones at this account (wrong codes count): an HTML page",
        "Too many failed sign-ins for this account; try again later (about 30 s).",
    ),
    "headers": error_responses(429)["429"]["headers"],
}


def _get(operation: str, summary: str, description: str, page: dict[str, Any], **more: Any) -> dict[str, Any]:
    responses = {"200": page, "303": more.pop("see_other", _TO_SIGN_IN), **more.pop("responses", {})}
    return {
        **_COMMON,
        "operationId": operation,
        "summary": summary,
        "description": description,
        **more,
        "responses": {**responses, **_GATEWAY, **unexpected_response()},
    }


def _post(
    operation: str, summary: str, description: str, fields: dict[str, Any], done: dict[str, Any], **more: Any
) -> dict[str, Any]:
    return {
        **_COMMON,
        "operationId": operation,
        "summary": summary,
        "description": description,
        **{k: v for k, v in more.items() if k != "responses"},
        "requestBody": _form("The page's form", {"csrf": _CSRF, **fields}, ["csrf", *fields]),
        "responses": {"303": done, "403": _FORGED, **more.get("responses", {}), **unexpected_response()},
    }


def _signin_second_step() -> dict[str, Any]:
    return {
        "get": _get(
            "sign_in_second_step_page",
            "The second step of signing in",
            "After the password: the code from the person's authenticator app, or, when their school requires "
            "two-step sign-in and they have no app, setting one up (a QR code and its key).",
            _page("The code's page, or the set-up's", "Two-step sign-in"),
            see_other=_see_other("No sign-in waits for a second step: to the sign-in page", "/oauth/signin"),
            parameters=[_NEXT],
        ),
        "post": _post(
            "sign_in_second_step",
            "Send the code",
            "A code is accepted once; a recovery code once. Wrong codes count in the sign-in lockout; five in one "
            "sign-in ask for the password again.",
            {"code": _CODE},
            _see_other(
                "Signed in: on to `next`; or back to the page, which says the code was not right", "/oauth/apps"
            ),
            parameters=[_NEXT],
            responses={"429": _TOO_MANY, **error_responses(503)},
        ),
    }


def security_paths() -> dict[str, Any]:
    confirm_params = [
        {
            "name": "action",
            "in": "query",
            "required": True,
            "description": "What to confirm.",
            "schema": {"type": "string", "enum": ["remove-totp", "renew-codes"]},
            "example": "remove-totp",
        }
    ]
    codes = _see_other("Done: the new recovery codes, shown once", "/oauth/security/codes")
    return {
        "/oauth/signin/second-step": _signin_second_step(),
        "/oauth/security": {
            "get": _get(
                "security_page",
                "Your sign-in security",
                "Whether an authenticator app is set up, how many recovery codes are left, and whether the "
                "person's school requires two-step sign-in of them.",
                _page("The security page", "Sign-in security"),
            )
        },
        "/oauth/security/totp": {
            "get": _get(
                "totp_enrolment_page",
                "Set up an authenticator app",
                "A QR code (inline SVG, drawn here) and the key as text; the form takes a code the app shows.",
                _page("The set-up page", "Set up two-step sign-in"),
                responses={"400": _error_page("An app is set up already", "Your authenticator app is already set up.")},
            ),
            "post": _post(
                "totp_enrol",
                "Turn on two-step sign-in",
                "A code from the app confirms it; ten recovery codes are made and shown once.",
                {"code": _CODE},
                _see_other("Set up: the recovery codes; or back, the code not right", "/oauth/security/codes?new=1"),
                responses={"400": _error_page("No app is being set up", "Go back and try again.")},
            ),
        },
        "/oauth/security/codes": {
            "get": _get(
                "recovery_codes_page",
                "Your new recovery codes, once",
                "Shown once after they are made; afterwards the page sends the browser on.",
                _page("The recovery codes", "Your recovery codes"),
                parameters=[_NEXT],
            )
        },
        "/oauth/security/confirm": {
            "get": _get(
                "confirm_security_action",
                "Confirm removing the app, or making new recovery codes",
                "Says what the action does; its form posts it.",
                _page("The confirmation", "Remove your authenticator app?"),
                parameters=confirm_params,
                responses={"400": _error_page("No such action", "Go back and try again.")},
            )
        },
        "/oauth/security/remove-totp": {
            "post": _post(
                "remove_totp",
                "Remove the authenticator app",
                "The app and its recovery codes stop working.",
                {},
                _see_other("Removed: back to the page, which says so", "/oauth/security?done=removed"),
                responses=error_responses(503),
            )
        },
        "/oauth/security/renew-codes": {
            "post": _post(
                "renew_recovery_codes",
                "Make new recovery codes",
                "Ten new codes; the old ones stop working.",
                {},
                codes,
                responses={"400": _error_page("No authenticator app is set up", "Set up an authenticator app first.")},
            )
        },
        "/oauth/school/security": {
            "get": _get(
                "school_two_step_page",
                "Two-step sign-in at the school",
                "For a school's owners: who must sign in in two steps. Anyone else: 404.",
                _page("The school's requirement", "Two-step sign-in at Demo Course School"),
                responses={"404": _error_page("Not an owner of a school: an HTML page", "There is no such page.")},
            ),
            "post": _post(
                "require_two_step",
                "Change who must sign in in two steps",
                "An event (`two_step_required`); applies from each person's next sign-in.",
                {"required": _RULE},
                _see_other("Saved: back to the page, which says so", "/oauth/school/security?done=1"),
                responses={
                    "400": _error_page("Not one of the choices", "Go back and choose one of the options."),
                    "404": _error_page("Not an owner of a school: an HTML page", "There is no such page."),
                },
            ),
        },
        "/oauth/school/people": _school_people(),
    }


def _school_people() -> dict[str, Any]:
    """An owner's invitations (endpoints/invitations.py: the use case of `admin users invite` too)."""
    not_owner = _error_page("Not an owner of a school: an HTML page", "There is no such page.")
    confirm = _see_other(
        "Not signed in: to the sign-in page; no recent sign-in: to the confirmation, then back here",
        "/oauth/account/confirm?next=%2Foauth%2Fschool%2Fpeople",
    )
    return {
        "get": _get(
            "school_people_page",
            "Invite people to the school",
            "For a school's owners (anyone else: 404), after a recent sign-in: the invitation form and the "
            "invitations not taken up yet (who, as what, sent, valid until).",
            _page("The school's people page", "Invite people to Demo Course School"),
            see_other=confirm,
            responses={"404": not_owner},
        ),
        "post": _post(
            "invite_to_school",
            "Invite a person",
            "A new person of the owner's school, e-mailed a single-use link valid `INVITATION_TTL` where they choose "
            "their password (someone invited who has not: a new link). As admin, lecturer or student: only the "
            "admin CLI makes owners. An event (`user_invited`). An address of another school's person gets the "
            "same answer, and nothing is created or sent.",
            {
                "email": {
                    "type": "string",
                    "format": "email",
                    "description": "Their e-mail address (where the link goes).",
                    "examples": ["ada@example.com"],
                },
                "name": {"type": "string", "description": "Their name.", "examples": ["Ada Lovelace"]},
                "role": _ROLE,
            },
            _see_other("Invited: back to the page, which says so", "/oauth/school/people?done=invited"),
            responses={
                "400": _error_page("Not a role an owner gives, or no valid address or name", "Choose admin, …"),
                "404": not_owner,
                "409": _error_page("One of the school's people has this address", "… is already one of the …"),
                "429": {
                    **_error_page("Past RATE_INVITATIONS_PER_OWNER: an HTML page", "Wait about 60 seconds."),
                    "headers": error_responses(429)["429"]["headers"],
                },
            },
        ),
    }
