"""The OpenAPI description of the passkeys' pages (issue 40): adding, renaming and
removing one under the security page, and signing in with one on the standalone sign-in
page (in place of the password, or as its second step). Pages for a browser: HTML, forms,
303s; the browser's WebAuthn answer is posted as JSON in a form field by our script."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses

from .account import _error_page, _page, _page_or_refused_path, _see_other
from .security import _NEXT, _TOO_MANY, _get, _post

_TO_SIGN_IN = _see_other("Not signed in: to the sign-in page", "/oauth/signin?next=%2Foauth%2Fsecurity")
_ID = "0b7f6c1e-2a9d-4c57-8e1f-2b7d9a4c6e81"
_PASSKEY_ID = {
    "name": "passkey_id",
    "in": "path",
    "required": True,
    "description": "One of the person's passkeys, as their security page links it.",
    "schema": {"type": "string"},
    "example": _ID,
}
_NAME = {"type": "string", "description": "What the person calls the passkey.", "examples": ["Laptop"]}
_ANSWER = (
    "The browser's answer to `navigator.credentials.{}()` as JSON (WebAuthn's "
    "`PublicKeyCredential.toJSON()` form, binary fields base64url), filled in by our script."
)
_REGISTRATION = {
    "type": "string",
    "description": _ANSWER.format("create"),
    "examples": [
        '{"id":"AQID","rawId":"AQID","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}'
    ],
}
_ASSERTION = {
    "type": "string",
    "description": _ANSWER.format("get"),
    "examples": [
        '{"id":"AQID","rawId":"AQID","type":"public-key","response":{"clientDataJSON":"e30",'
        '"authenticatorData":"AA","signature":"AA","userHandle":null}}'
    ],
}
_NOT_HERE = _error_page(
    "Passkeys are not available at this server's address (an IP address, or plain http off localhost)",
    "Passkeys are not available on this server: see your security page for why.",
)
_NO_SUCH = _page_or_refused_path(_error_page("The person has no such passkey", "you have no such passkey"))
_ERRORS = {"429": _TOO_MANY, **error_responses(503)}


def _change(action: str, summary: str, heading: str, done: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": _get(
            f"{action}_passkey_page",
            summary,
            "Its form's token is bound to the session and to this passkey: only this page gives it.",
            _page("The page", heading),
            parameters=[_PASSKEY_ID],
            responses={"404": _NO_SUCH},
        ),
        "post": _post(
            f"{action}_passkey",
            summary,
            "An event; the token of this passkey's own page only.",
            fields,
            _see_other("Done: back to the security page, which says so", f"/oauth/security?done={done}"),
            parameters=[_PASSKEY_ID],
            responses={"404": _NO_SUCH, "400": _error_page("No name given", "a passkey needs a name")},
        ),
    }


_SECOND_STEP = (
    "One of the person's own passkeys, answering the second step page's challenge (once). Counted as "
    "a code is: the lockout, and five failures ask for the password again. Where the school requires "
    "two steps of a person with no second factor, the page's passkey form makes a new passkey instead "
    "(`credential` a registration, named `name`): it completes the sign-in, and its ten recovery codes "
    "are shown once on `/oauth/security/codes`; a refused one counts as a wrong code."
)
_SECOND_STEP_DONE = (
    "Signed in: on to `next` (by way of the recovery codes of a passkey set up now); or back to the page, "
    "which says it failed"
)


def passkey_paths() -> dict[str, Any]:
    return {
        "/oauth/security/passkeys/new": {
            "get": _get(
                "new_passkey_page",
                "Add a passkey",
                "A name, and the registration's options (a challenge for this session, a few minutes, once) for "
                "our script, which shows the form where the browser supports passkeys.",
                _page("The page", "Add a passkey"),
                responses={"400": _NOT_HERE},
            )
        },
        "/oauth/security/passkeys": {
            "post": _post(
                "add_passkey",
                "Add the passkey the browser made",
                "Verified (WebAuthn §7.1: challenge, origin, relying party, user verification) and kept under its "
                "name; an event (`second_factor_added`). The person's first second factor comes with ten new "
                "recovery codes, shown once on `/oauth/security/codes?new=passkey` (where the answer leads then).",
                {"name": _NAME, "credential": _REGISTRATION},
                _see_other("Added: the security page; or back, nothing added", "/oauth/security?done=passkey-added"),
                responses={"400": _NOT_HERE},
            )
        },
        "/oauth/security/passkeys/{passkey_id}/rename": _change(
            "rename", "Rename a passkey", "Rename the passkey", "passkey-renamed", {"name": _NAME}
        ),
        "/oauth/security/passkeys/{passkey_id}/remove": _change(
            "remove", "Remove a passkey (confirmed)", "Remove the passkey «Laptop»?", "passkey-removed", {}
        ),
        "/oauth/signin/passkey": {
            "post": _post(
                "sign_in_with_passkey",
                "Sign in with a passkey, no password",
                "Any of the person's passkeys, with user verification, answering the page's challenge (once). "
                "Counted in the sign-in limits and lockout as a password is.",
                {
                    "next": {"type": "string", "description": "Where to go afterwards.", "examples": ["/oauth/apps"]},
                    "credential": _ASSERTION,
                },
                _see_other("Signed in: on to `next`; or back to the page, which says it failed", "/oauth/apps"),
                responses=_ERRORS,
            )
        },
        "/oauth/signin/second-step/passkey": {
            "post": _post(
                "sign_in_second_step_passkey",
                "Use a passkey as the second step, or set one up there",
                _SECOND_STEP,
                {"name": _NAME, "credential": _ASSERTION},
                _see_other(_SECOND_STEP_DONE, "/oauth/apps"),
                parameters=[_NEXT],
                responses=_ERRORS,
            )
        },
    }
