"""A software passkey authenticator for the tests: real WebAuthn answers, made as a
browser and an authenticator make them (WebAuthn Level 3 §6.1 authenticator data, §6.5
attestation object with the "none" format, §5.8.1 client data), signed with P-256 keys
of `cryptography`, encoded with the `webauthn` library's own CBOR encoder. The server
verifies them with the library as it verifies a browser's, so a test can also make the
answers a browser never would: another origin, another relying party, another person's
user handle, no user verification, a counter gone backwards."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import encode_cbor

UP, UV, AT = 0x01, 0x04, 0x40  # authenticator data flags (§6.1)
_OPTIONS = re.compile(r'data-options="([^"]+)"')


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def options_of(page: str) -> dict[str, Any]:
    """The WebAuthn options a page hands our script (its form's data-options)."""
    match = _OPTIONS.search(page)
    assert match, "the page offers no passkey"
    return json.loads(html.unescape(match.group(1)))


@dataclass
class Credential:
    id: bytes
    key: ec.EllipticCurvePrivateKey
    user_handle: bytes
    rp_id: str
    sign_count: int = 0


@dataclass
class SoftAuthenticator:
    origin: str  # the page's origin, as a browser reports it
    credentials: list[Credential] = field(default_factory=list)

    def create(self, options: dict[str, Any], *, origin: str | None = None, rp_id: str | None = None) -> str:
        """The answer to `navigator.credentials.create(options)`, as JSON."""
        rp = rp_id or options["rp"]["id"]
        key = ec.generate_private_key(ec.SECP256R1())
        numbers = key.public_key().public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        credential = Credential(secrets.token_bytes(32), key, unb64url(options["user"]["id"]), rp)
        attested = bytes(16) + len(credential.id).to_bytes(2, "big") + credential.id + encode_cbor(cose)
        auth_data = hashlib.sha256(rp.encode()).digest() + bytes([UP | UV | AT]) + (0).to_bytes(4, "big") + attested
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        self.credentials.append(credential)
        return json.dumps(
            {
                "id": b64url(credential.id),
                "rawId": b64url(credential.id),
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64url(client_data),
                    "attestationObject": b64url(encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})),
                    "transports": ["internal"],
                },
                "clientExtensionResults": {},
            }
        )

    def get(
        self,
        options: dict[str, Any],
        *,
        credential: Credential | None = None,
        origin: str | None = None,
        rp_id: str | None = None,
        user_verified: bool = True,
        user_handle: bytes | None = None,
        sign_count: int | None = None,
    ) -> str:
        """The answer to `navigator.credentials.get(options)`, as JSON: signed by
        `credential` (the first one the options allow, else the last one made)."""
        chosen = credential or self._allowed(options)
        chosen.sign_count = sign_count if sign_count is not None else chosen.sign_count + 1
        rp = rp_id or chosen.rp_id
        flags = UP | (UV if user_verified else 0)
        auth_data = hashlib.sha256(rp.encode()).digest() + bytes([flags]) + chosen.sign_count.to_bytes(4, "big")
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signature = chosen.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return json.dumps(
            {
                "id": b64url(chosen.id),
                "rawId": b64url(chosen.id),
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64url(client_data),
                    "authenticatorData": b64url(auth_data),
                    "signature": b64url(signature),
                    "userHandle": b64url(user_handle if user_handle is not None else chosen.user_handle),
                },
                "clientExtensionResults": {},
            }
        )

    def _allowed(self, options: dict[str, Any]) -> Credential:
        allowed = {unb64url(c["id"]) for c in options.get("allowCredentials") or []}
        for credential in reversed(self.credentials):
            if not allowed or credential.id in allowed:
                return credential
        raise AssertionError("none of this authenticator's passkeys is allowed")

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        data = {"type": kind, "challenge": challenge, "origin": origin or self.origin, "crossOrigin": False}
        return json.dumps(data, separators=(",", ":")).encode()
