"""JOSE helpers over joserfc: signing keys, their encryption at rest, JWT checks.

Access tokens are JWTs per RFC 9068 (header `typ: at+jwt`, §2.1); §4 lists the
checks a resource server makes, which `verify_access_token` performs.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable
from typing import Any

import msgspec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey

from .errors import InvalidTokenError
from .jsonbody import decode_json
from .secrets import new_token

ACCESS_TOKEN_TYP = "at+jwt"
ACCESS_TOKEN_ALGS = ("ES256",)
ID_TOKEN_ALGS = ("RS256", "ES256")


def generate_signing_key(alg: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A new key for `alg`: (kid, private JWK, public JWK)."""
    kid = new_token(12)
    params: Any = {"kid": kid, "alg": alg, "use": "sig"}
    key: ECKey | RSAKey
    if alg == "ES256":
        key = ECKey.generate_key("P-256", parameters=params, private=True)
    elif alg == "RS256":
        key = RSAKey.generate_key(2048, parameters=params, private=True)
    else:
        raise ValueError(f"unsupported signing algorithm {alg}")
    return kid, key.as_dict(private=True), key.as_dict(private=False)


def decode_kek(value: str) -> bytes:
    """The key-encryption key: 32 bytes, base64url (padding optional)."""
    raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    if len(raw) != 32:
        raise ValueError("KEY_ENCRYPTION_KEY must be 32 bytes, base64url-encoded")
    return raw


def new_kek() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()


class KeyEncryptor:
    """AES-256-GCM encryption of private JWKs at rest; the kid is the associated data."""

    def __init__(self, kek: bytes) -> None:
        self._aead = AESGCM(kek)

    def seal(self, kid: str, private_jwk: dict[str, Any]) -> bytes:
        nonce = os.urandom(12)
        return nonce + self._aead.encrypt(nonce, msgspec.json.encode(private_jwk), kid.encode())

    def open(self, kid: str, sealed: bytes) -> dict[str, Any]:
        return msgspec.json.decode(self.open_bytes(kid, sealed))

    def open_bytes(self, kid: str, sealed: bytes) -> bytes:
        """The private JWK as it was sealed (its JSON), unparsed."""
        return self._aead.decrypt(sealed[:12], sealed[12:], kid.encode())


def import_private(jwk_dict: dict[str, Any]) -> ECKey | RSAKey:
    return (ECKey if jwk_dict["kty"] == "EC" else RSAKey).import_key(jwk_dict)


class SigningKey:
    """A private key imported once: importing an RSA JWK checks the key, which costs
    tens of milliseconds, so it must not happen per token."""

    def __init__(self, private_jwk: dict[str, Any]) -> None:
        self.kid = private_jwk["kid"]
        self.alg = private_jwk["alg"]
        self.key = import_private(private_jwk)

    def sign(self, claims: dict[str, Any], *, typ: str = "JWT") -> str:
        return jwt.encode({"alg": self.alg, "kid": self.kid, "typ": typ}, claims, self.key)


def sign_jwt(claims: dict[str, Any], private_jwk: dict[str, Any], *, typ: str = "JWT") -> str:
    """One-off signing (tests, tools); servers keep a SigningKey."""
    return SigningKey(private_jwk).sign(claims, typ=typ)


def key_set(public_jwks: Iterable[dict[str, Any]]) -> KeySet:
    return KeySet.import_key_set({"keys": list(public_jwks)})


def unverified_header(token: str) -> dict[str, Any]:
    """The JOSE header, for key selection only (never trusted for anything else)."""
    head = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except ValueError:  # bad base64 (binascii.Error)
        raise InvalidTokenError("the access token is malformed") from None
    header = decode_json(raw, invalid=lambda _: InvalidTokenError("the access token is malformed"))
    if not isinstance(header, dict):
        raise InvalidTokenError("the access token is malformed")
    return header


def verify_access_token(
    token: str,
    keys: KeySet,
    *,
    issuer: str,
    audience: str | None,
    now: int,
    leeway: int = 30,
) -> dict[str, Any]:
    """Validate a JWT access token per RFC 9068 §4; return its claims.

    `audience=None` skips the audience check (the authorization server's own
    UserInfo endpoint accepts its tokens whatever resource they were bound to).
    """
    claims = _signed_claims(token, keys, issuer=issuer, audience=audience)
    _check_lifetime(claims, now=now, leeway=leeway)
    return claims


def _signed_claims(token: str, keys: KeySet, *, issuer: str, audience: str | None) -> dict[str, Any]:
    """RFC 9068 §4 steps that give the same answer for the same token and keys: the
    header's `typ` and `alg`, the signature, the required claims, issuer and audience."""
    header = unverified_header(token)
    typ = str(header.get("typ", "")).lower()
    if typ not in (ACCESS_TOKEN_TYP, f"application/{ACCESS_TOKEN_TYP}"):
        raise InvalidTokenError("the token is not an access token")
    if header.get("alg") not in ACCESS_TOKEN_ALGS:
        raise InvalidTokenError("the access token is signed with an algorithm that is not accepted")
    try:
        decoded = jwt.decode(token, keys, algorithms=list(ACCESS_TOKEN_ALGS))
    except JoseError:
        raise InvalidTokenError("the access token signature is invalid") from None
    except (ValueError, TypeError, KeyError):
        raise InvalidTokenError("the access token is malformed") from None
    claims = decoded.claims
    for name in ("iss", "sub", "aud", "exp", "iat", "jti", "client_id"):
        if name not in claims:
            raise InvalidTokenError(f"the access token lacks the {name} claim")
    if claims["iss"] != issuer:
        raise InvalidTokenError("the access token was issued by another issuer")
    if audience is not None:
        aud = claims["aud"]
        if audience not in (aud if isinstance(aud, list) else [aud]):
            raise InvalidTokenError("the access token is not meant for this resource")
    return claims


def _check_lifetime(claims: dict[str, Any], *, now: int, leeway: int) -> None:
    """RFC 9068 §4 steps that depend on the time: `exp`, and `nbf` (or `iat`)."""
    if not isinstance(claims["exp"], int) or claims["exp"] + leeway <= now:
        raise InvalidTokenError("the access token has expired")
    nbf = claims.get("nbf", claims["iat"])
    if not isinstance(nbf, int) or nbf - leeway > now:
        raise InvalidTokenError("the access token is not valid yet")


class VerifiedTokens:
    """`verify_access_token` with one key set, remembering the tokens it verified.

    The same access token comes back again and again (a resource server introspects
    it, or calls UserInfo, on each of its own requests), and its signature check is
    the largest part of that work (an ECDSA verification; bench/RESULTS.md).
    What a token's text and the key set decide (signature, typ, alg, required claims,
    issuer, audience) is kept by the token's exact text, so a changed byte is a new
    token, checked in full. The time checks run at every use, and a token is kept only
    once it passed them. Bound to one key set: the holder that loads new keys makes a
    new one (a removed key's tokens then fail). At most `size` tokens, the oldest
    dropped first. Revocation is not decided here: callers check it at every use."""

    def __init__(self, keys: KeySet, *, issuer: str, audience: str | None, size: int = 4096) -> None:
        self._keys = keys
        self._issuer = issuer
        self._audience = audience
        self._size = size
        self._claims: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._claims)

    def verify(self, token: str, *, now: int, leeway: int) -> dict[str, Any]:
        claims = self._claims.get(token)
        if claims is not None:
            _check_lifetime(claims, now=now, leeway=leeway)
            return dict(claims)
        claims = _signed_claims(token, self._keys, issuer=self._issuer, audience=self._audience)
        _check_lifetime(claims, now=now, leeway=leeway)  # only a token valid now is kept
        if len(self._claims) >= self._size:
            del self._claims[next(iter(self._claims))]
        self._claims[token] = claims
        return dict(claims)  # the caller's copy: the kept one must not change


def verify_id_token_hint(token: str, keys: KeySet, *, issuer: str) -> dict[str, Any]:
    """An ID token of ours presented back as a hint (OIDC RP-Initiated Logout 1.0 §2:
    `id_token_hint`): signature and issuer must hold; an expired one is still a good
    hint (the spec expects the OP to accept them). Raises InvalidTokenError."""
    header = unverified_header(token)
    if str(header.get("typ", "JWT")).upper() != "JWT" or header.get("alg") not in ID_TOKEN_ALGS:
        raise InvalidTokenError("the ID token hint is not an ID token of this server")
    try:
        claims = jwt.decode(token, keys, algorithms=list(ID_TOKEN_ALGS)).claims
    except JoseError:
        raise InvalidTokenError("the ID token hint's signature is invalid") from None
    except (ValueError, TypeError, KeyError):
        raise InvalidTokenError("the ID token hint is malformed") from None
    if claims.get("iss") != issuer or not isinstance(claims.get("sub"), str) or "aud" not in claims:
        raise InvalidTokenError("the ID token hint was not issued by this server")
    return dict(claims)
