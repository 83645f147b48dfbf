"""Proof Key for Code Exchange, RFC 7636. Only `S256` is accepted (OAuth 2.1 §4.1.1;
RFC 9700 §2.1.1 says `plain` must not be used)."""

from __future__ import annotations

import base64
import hashlib
import re

from courseschool.common.errors import InvalidGrantError, InvalidRequestError, fit_description
from courseschool.common.secrets import same

# §4.1: code_verifier = 43*128unreserved; §4.2: the S256 challenge is the unpadded
# base64url of a SHA-256 digest, so exactly 43 characters.
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")
SUPPORTED_METHODS = ("S256",)


def check_challenge(challenge: str | None, method: str | None) -> str:
    """Validate the authorization request's PKCE parameters (§4.3); return the challenge."""
    if not challenge:
        raise InvalidRequestError("code_challenge is required (PKCE, S256)")
    if method is None or method == "":
        raise InvalidRequestError("code_challenge_method is required and must be S256")
    if method not in SUPPORTED_METHODS:
        raise InvalidRequestError(f"code_challenge_method {fit_description(method)} is not supported; use S256")
    if not _CHALLENGE.fullmatch(challenge):
        raise InvalidRequestError("code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)")
    return challenge


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify(verifier: str | None, challenge: str) -> None:
    """§4.6: the server recomputes the challenge from the verifier and compares."""
    if not verifier:
        raise InvalidRequestError("code_verifier is required", detail="the token request has no code_verifier")
    if not _VERIFIER.fullmatch(verifier):
        raise InvalidRequestError(
            "code_verifier must be 43 to 128 unreserved characters",
            detail=f"a code_verifier of {len(verifier)} characters, or with others than unreserved ones",
        )
    if not same(s256(verifier), challenge):
        raise InvalidGrantError(
            "code_verifier does not match the code_challenge",
            detail="the S256 digest of the code_verifier is not the code's code_challenge",
        )
