"""Second factors: authenticator-app codes (TOTP, RFC 6238), recovery codes, and a
school's requirement of two-step sign-in. Rules only: the secrets come in and the
decisions go out; storage and the pages are elsewhere.

- A TOTP code is six digits of HMAC-SHA1 over 30-second steps (RFC 6238 §4, the
  defaults every authenticator app uses). One step either side is accepted for clock
  drift (§5.2, "at most one time step"), and a code is accepted only for a step later
  than the last one accepted, so a code works once (§5.2: "the verifier MUST NOT accept
  the second attempt of the OTP after the successful validation").
- Recovery codes: ten per person, each ten characters of an alphabet without
  look-alikes (50 bits), shown once, kept only as a keyed digest, each used once.
- The requirement: `staff` covers owners and admins; `approvers` anyone whose role may
  approve an app's changes to the school's data (a `:write` scope beyond the person's
  own account); `everyone` everyone.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Literal, get_args

import pyotp

from courseschool.common.scopes import ROLE_CAPS

STEP = 30  # seconds, RFC 6238 §5.2
DIGITS = 6
DRIFT = 1  # steps either side
ISSUER = "Course School"

RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no i, l, o, 0, 1
_RECOVERY_LENGTH = 10

TwoStepRule = Literal["none", "staff", "approvers", "everyone"]
TWO_STEP_RULES: tuple[TwoStepRule, ...] = get_args(TwoStepRule)

Factor = Literal["totp", "recovery_code"]


def new_totp_secret() -> str:
    """160 bits (RFC 4226 §4 recommends it), base32 as authenticator apps take it."""
    return pyotp.random_base32(32)


def provisioning_uri(secret: str, account: str) -> str:
    """The `otpauth://totp/...` URI the QR code carries (Google Authenticator's Key Uri
    Format, which every app reads)."""
    return pyotp.TOTP(secret, digits=DIGITS, interval=STEP).provisioning_uri(name=account, issuer_name=ISSUER)


def normalised_code(typed: str) -> str:
    """What a person typed, without the spaces and dashes apps and people put in."""
    return "".join(ch for ch in typed.strip() if ch not in " -\u00a0").lower()


def looks_like_totp(code: str) -> bool:
    return len(code) == DIGITS and code.isascii() and code.isdigit()


def accepted_step(secret: str, code: str, *, now: int, last_step: int) -> int | None:
    """The time step `code` is the code of, within the drift and after `last_step`, or
    None. Every candidate is compared in constant time."""
    if not looks_like_totp(code):
        return None
    totp = pyotp.TOTP(secret, digits=DIGITS, interval=STEP)
    current = now // STEP
    found = None
    for step in range(current - DRIFT, current + DRIFT + 1):
        if hmac.compare_digest(totp.generate_otp(step), code) and step > last_step and found is None:
            found = step
    return found


def new_recovery_codes() -> list[str]:
    """Ten new codes as shown: `abcde-fghjk`."""
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(_RECOVERY_LENGTH))
        codes.append(f"{raw[:5]}-{raw[5:]}")
    return codes


def looks_like_recovery_code(code: str) -> bool:
    return len(code) == _RECOVERY_LENGTH and all(ch in _RECOVERY_ALPHABET for ch in code)


def recovery_code_digest(key: bytes, user_id: str, code: str) -> bytes:
    """A recovery code as it is stored: an HMAC under a key derived from the
    key-encryption key, so a copy of the table alone cannot be searched for codes; the
    person's id is part of it, so one code's digest says nothing of another person's."""
    return hmac.new(key, f"{user_id}:{normalised_code(code)}".encode(), hashlib.sha256).digest()


def covered(rule: str, role: str) -> bool:
    """Whether the school's requirement asks two-step sign-in of a person of `role`."""
    if rule == "everyone":
        return True
    if rule == "staff":
        return role in ("owner", "admin")
    if rule == "approvers":
        cap = ROLE_CAPS.get(role, frozenset())  # type: ignore[call-overload]
        return any(s.endswith(":write") and not s.startswith("account:") for s in cap)
    return False
