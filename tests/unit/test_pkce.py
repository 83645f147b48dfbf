"""PKCE, RFC 7636: S256 only, challenge and verifier syntax, verification."""

from __future__ import annotations

import base64
import hashlib

import pytest

from courseschool.authz.protocol import pkce
from courseschool.common.errors import InvalidGrantError, InvalidRequestError

# RFC 7636 Appendix B.
RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_s256_matches_rfc7636_appendix_b_vector() -> None:
    assert pkce.s256(RFC_VERIFIER) == RFC_CHALLENGE


@pytest.mark.parametrize("verifier", ["a" * 43, "A-._~" * 10, "z" * 128])
def test_s256_is_unpadded_base64url_of_sha256(verifier: str) -> None:
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    assert pkce.s256(verifier) == expected
    assert len(pkce.s256(verifier)) == 43


def test_only_s256_is_supported() -> None:
    assert pkce.SUPPORTED_METHODS == ("S256",)


def test_valid_s256_challenge_is_returned() -> None:
    assert pkce.check_challenge(RFC_CHALLENGE, "S256") == RFC_CHALLENGE


@pytest.mark.parametrize(
    ("challenge", "method", "needle"),
    [
        (None, "S256", "code_challenge is required"),
        ("", "S256", "code_challenge is required"),
        (RFC_CHALLENGE, None, "code_challenge_method is required"),
        (RFC_CHALLENGE, "", "code_challenge_method is required"),
        (RFC_CHALLENGE, "plain", "not supported"),
        (RFC_CHALLENGE, "s256", "not supported"),  # method names are case-sensitive
        (RFC_CHALLENGE, "S512", "not supported"),
        (RFC_CHALLENGE[:-1], "S256", "43 characters"),  # 42 characters
        (RFC_CHALLENGE + "A", "S256", "43 characters"),  # 44 characters
        (RFC_CHALLENGE[:-1] + "=", "S256", "43 characters"),  # padding
        (RFC_CHALLENGE[:-1] + "+", "S256", "43 characters"),  # base64, not base64url
        (RFC_CHALLENGE[:-1] + "/", "S256", "43 characters"),
        (RFC_CHALLENGE[:-1] + ".", "S256", "43 characters"),  # verifier-only character
        (RFC_CHALLENGE[:-1] + "\n", "S256", "43 characters"),
        (RFC_VERIFIER + RFC_VERIFIER, "S256", "43 characters"),
    ],
)
def test_missing_plain_unknown_or_malformed_challenge_is_invalid_request(
    challenge: str | None, method: str | None, needle: str
) -> None:
    with pytest.raises(InvalidRequestError) as info:
        pkce.check_challenge(challenge, method)
    assert info.value.error == "invalid_request"
    assert needle in info.value.description


def test_matching_verifier_passes() -> None:
    assert pkce.verify(RFC_VERIFIER, RFC_CHALLENGE) is None


@pytest.mark.parametrize("length", [43, 128])
def test_verifier_length_bounds_are_inclusive(length: int) -> None:
    verifier = ("abcXYZ019-._~" * 20)[:length]
    pkce.verify(verifier, pkce.s256(verifier))


@pytest.mark.parametrize(
    "verifier",
    [
        None,
        "",
        "a" * 42,  # too short
        "a" * 129,  # too long
        RFC_VERIFIER[:-1] + "+",
        RFC_VERIFIER[:-1] + "/",
        RFC_VERIFIER[:-1] + "=",
        RFC_VERIFIER[:-1] + " ",
        RFC_VERIFIER[:-1] + "é",
        RFC_VERIFIER[:-1] + "\n",
    ],
)
def test_missing_short_long_or_bad_character_verifier_is_invalid_request(verifier: str | None) -> None:
    with pytest.raises(InvalidRequestError) as info:
        pkce.verify(verifier, RFC_CHALLENGE)
    assert info.value.error == "invalid_request"


@pytest.mark.parametrize(
    ("verifier", "challenge"),
    [
        ("a" * 43, RFC_CHALLENGE),
        (RFC_VERIFIER[:-1] + "l", RFC_CHALLENGE),
        (RFC_VERIFIER, RFC_VERIFIER),  # the plain method is never honoured
        (RFC_VERIFIER, RFC_CHALLENGE.lower()),
    ],
)
def test_mismatching_verifier_is_invalid_grant(verifier: str, challenge: str) -> None:
    with pytest.raises(InvalidGrantError) as info:
        pkce.verify(verifier, challenge)
    assert info.value.error == "invalid_grant"


def test_challenge_with_trailing_newline_is_invalid_request() -> None:
    with pytest.raises(InvalidRequestError):
        pkce.check_challenge(RFC_CHALLENGE + "\n", "S256")


def test_verifier_with_trailing_newline_is_invalid_request() -> None:
    with pytest.raises(InvalidRequestError):
        pkce.verify(RFC_VERIFIER + "\n", RFC_CHALLENGE)
