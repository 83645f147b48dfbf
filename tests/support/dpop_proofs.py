"""DPoP proofs (RFC 9449 §4.2) as a client makes them, for the tests at every depth:
made with joserfc and the standard library only, never with the product's own code."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import warnings
from typing import Any

from joserfc import jws
from joserfc.errors import SecurityWarning
from joserfc.jwk import ECKey, OKPKey, RSAKey


def ath(access_token: str) -> str:
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class DpopKey:
    """A client's DPoP key pair and the proofs it signs."""

    def __init__(self, alg: str = "ES256", *, rsa_bits: int = 2048) -> None:
        self.alg = alg
        if alg == "ES256":
            self.key: Any = ECKey.generate_key("P-256", private=True)
        elif alg in ("Ed25519", "EdDSA"):
            self.key = OKPKey.generate_key("Ed25519", private=True)
        else:
            with warnings.catch_warnings():  # a short key on purpose, for a refusal
                warnings.simplefilter("ignore", SecurityWarning)
                self.key = RSAKey.generate_key(rsa_bits, private=True)
        self._registry = jws.JWSRegistry(algorithms=[alg], strict_check_header=False)

    @property
    def public_jwk(self) -> dict[str, Any]:
        return dict(self.key.as_dict(private=False))

    @property
    def jkt(self) -> str:
        return self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        iat: int | None = None,
        jti: str | None = None,
        header: dict[str, Any] | None = None,
        claims: dict[str, Any] | None = None,
        leave_out: tuple[str, ...] = (),
        signer: Any = None,
    ) -> str:
        """A proof for `method` `url`; `header`, `claims` and `leave_out` bend it (for the
        refusals), `signer` signs with another key than the one in `jwk`."""
        head: dict[str, Any] = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk, **(header or {})}
        body: dict[str, Any] = {
            "jti": jti or secrets.token_urlsafe(16),
            "htm": method,
            "htu": url,
            "iat": int(time.time()) if iat is None else iat,
        }
        if access_token is not None:
            body["ath"] = ath(access_token)
        if nonce is not None:
            body["nonce"] = nonce
        body.update(claims or {})
        for name in leave_out:
            head.pop(name, None)
            body.pop(name, None)
        payload = json.dumps(body).encode()
        return jws.serialize_compact(head, payload, signer or self.key, registry=self._registry)


def unsigned(method: str, url: str, jwk: dict[str, Any], *, iat: int | None = None) -> str:
    """A proof with `alg: none` (an unsecured JWS, RFC 7515 §A.5)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    head = {"typ": "dpop+jwt", "alg": "none", "jwk": jwk}
    body = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": iat or int(time.time())}
    return f"{part(head)}.{part(body)}."
