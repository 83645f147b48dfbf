"""DPoP proofs (RFC 9449 §4): an ES256 key of the program's own, kept with its sign-in,
and a new signed proof for every request. Needs `cryptography` (the `dpop` extra)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

from .errors import ClientError


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _ec() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError:
        raise ClientError("DPoP needs the cryptography package: pip install 'courseschool-client[dpop]'") from None
    return ec


def new_key() -> dict[str, str]:
    """A new P-256 private key as a JWK (RFC 7518 §6.2)."""
    ec = _ec()
    numbers = ec.generate_private_key(ec.SECP256R1()).private_numbers()
    public = numbers.public_numbers
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": _b64(public.x.to_bytes(32, "big")),
        "y": _b64(public.y.to_bytes(32, "big")),
        "d": _b64(numbers.private_value.to_bytes(32, "big")),
    }


def public_jwk(key: dict[str, str]) -> dict[str, str]:
    return {"kty": "EC", "crv": "P-256", "x": key["x"], "y": key["y"]}


def thumbprint(key: dict[str, str]) -> str:
    """RFC 7638: SHA-256 of the required members in lexicographic order, no spaces."""
    canonical = json.dumps(public_jwk(key), sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest())


def proof(
    key: dict[str, str], method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
) -> str:
    """A DPoP proof JWT for one request: `htm`, `htu` (no query or fragment), `iat`, `jti`,
    and `ath` when an access token goes with it (RFC 9449 §4.2)."""
    ec = _ec()
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(key)}
    claims: dict[str, Any] = {
        "jti": secrets.token_urlsafe(16),
        "htm": method.upper(),
        "htu": url.split("?", 1)[0].split("#", 1)[0],
        "iat": int(time.time()),
    }
    if access_token is not None:
        claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
    if nonce is not None:
        claims["nonce"] = nonce
    signing_input = ".".join(_b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims))
    private = ec.derive_private_key(int.from_bytes(_unb64(key["d"]), "big"), ec.SECP256R1())
    r, s = decode_dss_signature(private.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
