"""Passkeys: WebAuthn Level 3 (W3C Recommendation) ceremonies, through the `webauthn`
library (py_webauthn), which parses the CBOR and COSE and checks every step of §7.1
(registration) and §7.2 (authentication). What is ours: which relying party we are, the
options we ask for, and what we make of the library's answer.

- The relying-party id is the host of the public origin (BASE_URL, §5.1.2 "RP ID"); the
  origin the browser reports must be that origin exactly (§7.1 step 9, §7.2 step 13). An
  IP address is no valid RP id (§5.1.2: "a valid domain string"), and a page served over
  plain http is a secure context only on `localhost` (W3C Secure Contexts §3.1): on any
  other such origin passkeys are not offered, and the pages say why.
- Registration asks for a discoverable credential (`residentKey: required`, §5.4.6) with
  user verification (§5.8.6), so the same passkey can sign in without a password.
- Signing in without a password requires user verification (the UV flag, §6.1): the
  passkey then stands for two factors (the device and its PIN or biometric). As a second
  factor after the password, user presence is enough.
- The signature counter (§6.1.1): a counter that is not above the one stored says the
  authenticator may have been cloned; the library refuses the assertion (the counter of
  an authenticator that keeps none stays 0 and is not compared).
- The user handle (§5.4.3) is the person's id (16 random bytes, no personal data); an
  assertion carrying one must carry its credential's owner's.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Literal
from urllib.parse import urlsplit

import msgspec
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import parse_authentication_credential_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticationCredential,
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

RP_NAME = "Course School"
TIMEOUT_MS = 120_000  # how long the browser gives the person (a hint, §5.4)
CHALLENGE_TTL = 300  # seconds a challenge stays usable: the timeout and the form's round trip
MAX_NAME = 64

Unavailable = Literal["ip_address", "not_secure"]
Assertion = AuthenticationCredential  # the browser's answer to navigator.credentials.get(), read


class RelyingParty(msgspec.Struct, frozen=True, kw_only=True):
    id: str  # the RP id: the public origin's host
    origin: str  # the origin the browser must report (scheme://host[:port])


def relying_party(base_url: str) -> RelyingParty | Unavailable:
    """Who we are to authenticators, or why passkeys cannot work at this origin."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return "ip_address"
    local = host == "localhost" or host.endswith(".localhost")
    if parts.scheme != "https" and not local:
        return "not_secure"
    return RelyingParty(id=host, origin=f"{parts.scheme}://{parts.netloc.lower()}")


def user_handle(user_id: str) -> bytes:
    return uuid.UUID(user_id).bytes


class Registered(msgspec.Struct, frozen=True, kw_only=True):
    credential_id: bytes
    public_key: bytes  # COSE_Key, as the authenticator gave it
    sign_count: int
    backed_up: bool


class Asserted(msgspec.Struct, frozen=True, kw_only=True):
    sign_count: int
    user_verified: bool
    backed_up: bool


class Refused(msgspec.Struct, frozen=True, kw_only=True):
    """The library's reason, for the log (never shown to the person)."""

    reason: str


def registration_options(
    rp: RelyingParty, *, user_id: str, email: str, name: str, exclude: list[bytes], challenge: bytes
) -> str:
    """`PublicKeyCredentialCreationOptions` (§5.4) as JSON for our script; the person's
    own passkeys excluded (§5.4: `excludeCredentials`), no attestation asked for."""
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=RP_NAME,
        user_id=user_handle(user_id),
        user_name=email,
        user_display_name=name or email,
        challenge=challenge,
        timeout=TIMEOUT_MS,
        attestation=AttestationConveyancePreference.NONE,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=c) for c in exclude],
    )
    return options_to_json(options)


def authentication_options(rp: RelyingParty, *, allow: list[bytes] | None, challenge: bytes) -> str:
    """`PublicKeyCredentialRequestOptions` (§5.5) as JSON. `allow`: the person's passkeys
    (the second factor: user presence is enough); None: any discoverable passkey (a sign-in
    without a password: user verification required)."""
    options = generate_authentication_options(
        rp_id=rp.id,
        challenge=challenge,
        timeout=TIMEOUT_MS,
        allow_credentials=[PublicKeyCredentialDescriptor(id=c) for c in allow or []],
        user_verification=UserVerificationRequirement.PREFERRED
        if allow is not None
        else UserVerificationRequirement.REQUIRED,
    )
    return options_to_json(options)


def verify_registration(rp: RelyingParty, credential: str, *, challenge: bytes) -> Registered | Refused:
    """§7.1, by the library: the challenge, origin, RP id hash, user presence and
    verification, and the public key's algorithm."""
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        return Refused(reason=_reason(exc))
    return Registered(
        credential_id=verified.credential_id,
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
        backed_up=verified.credential_backed_up,
    )


def parsed_assertion(credential: str) -> Assertion | Refused:
    """The browser's answer to `navigator.credentials.get()`, read (not yet verified): its
    credential id says whose passkey to verify it with."""
    try:
        return parse_authentication_credential_json(credential)
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        return Refused(reason=_reason(exc))


def verify_assertion(
    rp: RelyingParty,
    credential: Assertion,
    *,
    challenge: bytes,
    public_key: bytes,
    sign_count: int,
    owner_id: str,
    user_verification: bool,
) -> Asserted | Refused:
    """§7.2, by the library (challenge, origin, RP id hash, flags, counter, signature);
    and ours: a user handle, when the authenticator gives one, is the owner's (§7.2 step 6)."""
    handle = credential.response.user_handle
    if handle is not None and handle != user_handle(owner_id):
        return Refused(reason="the user handle is another person's")
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
            credential_public_key=public_key,
            credential_current_sign_count=sign_count,
            require_user_verification=user_verification,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        return Refused(reason=_reason(exc))
    return Asserted(
        sign_count=verified.new_sign_count,
        user_verified=verified.user_verified,
        backed_up=verified.credential_backed_up,
    )


def clean_name(typed: str) -> str:
    """A passkey's name as kept: one line, trimmed, at most MAX_NAME characters."""
    return " ".join(typed.split())[:MAX_NAME]


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}"
