"""What the e-mail about a person's own account says (issue 40): the single-use link of
an invitation or a password reset (its token opened from the outbox's sealed part at
sending time, storage/account_links.py), and a change made on the account (a password,
a second factor, sessions ended), so that a person hears of a change they did not make.
messages.build_message turns these values into the message, as for the other kinds."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ..storage.mail_outbox import ACCOUNT_CHANGED, INVITATION, PASSWORD_RESET

ACCOUNT_KINDS = (INVITATION, PASSWORD_RESET, ACCOUNT_CHANGED)
LINK_PATH = "/oauth/password/choose"  # the page of a link (web/account_links.py)

# What changed, as the message's subject and first sentence say it.
CHANGES = {
    "password_changed": "Your Course School password was changed",
    "password_reset": "Your Course School password was reset",
    "signed_out_elsewhere": "Your Course School account was signed out on your other browsers",
    "totp_added": "Two-step sign-in was turned on for your Course School account",
    "totp_removed": "Your authenticator app was removed from your Course School account",
    "recovery_codes_renewed": "New recovery codes were made for your Course School account",
    "passkey_added": "A passkey was added to your Course School account",
    "passkey_renamed": "A passkey of your Course School account was renamed",
    "passkey_removed": "A passkey was removed from your Course School account",
    "second_factors_reset": "An administrator reset your Course School account's two-step sign-in",
}

PASSWORD_CHANGES = ("password_changed", "password_reset")  # the account's passkeys stay as they were


def link_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}{LINK_PATH}?{urlencode({'token': token})}"


def account_message(
    kind: str, details: dict[str, Any], *, base_url: str, shown: dict[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    """(template, subject, values) of an account message. `shown`: the values every
    message has, already made printable (person, school, device, address, at)."""
    base = base_url.rstrip("/")
    # A new password leaves the account's passkeys as they were: the message says so and
    # where to review them (a passkey someone else added still signs them in).
    values = {**shown, "kind": kind, "account_url": f"{base}/oauth/account", "security_url": f"{base}/oauth/security"}
    if kind == ACCOUNT_CHANGED:
        change = details.get("change")
        if change not in CHANGES:
            raise ValueError(f"no message of change {change!r}")
        more = {"change": change, "what": CHANGES[change], "passkeys_stay": change in PASSWORD_CHANGES}
        return "account_changed", CHANGES[change], {**values, **more}
    token = details.get("token")
    if not token:  # the link was spent, or its seal cleared: nothing to send
        raise ValueError("a link message without its link")
    values |= {"link": link_url(base_url, token), "until": details.get("until", "")}
    if kind == INVITATION:
        return "account_link", f"You are invited to {shown['school']} on Course School", values
    if kind == PASSWORD_RESET:
        return "account_link", "Choose a new Course School password", values
    raise ValueError(f"no message of kind {kind!r}")
