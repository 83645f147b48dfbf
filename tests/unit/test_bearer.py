"""The one `Authorization` parser (RFC 6750 §2.1, RFC 9449 §7.1) and the challenge of a
protected resource: Bearer and DPoP offered side by side (RFC 9449 §7.2), the error in
the challenge of the scheme the request used, `resource_metadata` (RFC 9728 §5.1)."""

from __future__ import annotations

import pytest

from courseschool.common.bearer import Credentials, bearer_token, challenge, challenged, presented_token
from courseschool.common.errors import (
    InsufficientScopeError,
    InvalidDpopProofError,
    InvalidTokenError,
    UseDpopNonceError,
)

PRM = "https://school.example/.well-known/oauth-protected-resource"
ALGS = 'algs="ES256 Ed25519 EdDSA RS256 PS256"'


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("Bearer abc.def", Credentials("Bearer", "abc.def")),
        ("bearer abc", Credentials("Bearer", "abc")),
        ("DPoP abc.def", Credentials("DPoP", "abc.def")),
        ("dpop  abc ", Credentials("DPoP", "abc")),
    ],
)
def test_the_bearer_and_dpop_schemes_are_read(header: str | None, expected: Credentials | None) -> None:
    assert presented_token(header) == expected


@pytest.mark.parametrize(
    "header", ["", "DPoP", "DPoP ", "Basic dXNlcjpwdw==", "DPoP a b", "Token abc", "DPoP " + "a" * 9000]
)
def test_anything_else_in_the_header_is_invalid_token(header: str) -> None:
    with pytest.raises(InvalidTokenError):
        presented_token(header)


def test_bearer_only_credentials_refuse_the_dpop_scheme() -> None:
    assert bearer_token("Bearer abc") == "abc" and bearer_token(None) is None
    with pytest.raises(InvalidTokenError):
        bearer_token("DPoP abc")


def test_without_error_both_schemes_are_offered() -> None:
    assert challenge(None, PRM) == f'Bearer resource_metadata="{PRM}", DPoP {ALGS}, resource_metadata="{PRM}"'


def test_an_error_of_a_bearer_request_goes_in_the_bearer_challenge() -> None:
    err = challenged(InvalidTokenError("the access token has expired"), PRM)
    assert err.status_code == 401
    assert err.headers["WWW-Authenticate"] == (
        f'Bearer error="invalid_token", error_description="the access token has expired", resource_metadata="{PRM}", '
        f'DPoP {ALGS}, resource_metadata="{PRM}"'
    )


def test_an_error_of_a_dpop_request_goes_in_the_dpop_challenge() -> None:
    err = challenged(InsufficientScopeError("needs orders:read", scope="orders:read"), PRM, scheme="DPoP")
    assert err.status_code == 403
    assert err.headers["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{PRM}", DPoP error="insufficient_scope", error_description="needs orders:read", '
        f'scope="orders:read", {ALGS}, resource_metadata="{PRM}"'
    )


@pytest.mark.parametrize("error", [InvalidDpopProofError("bad proof"), UseDpopNonceError("nonce")])
def test_a_refused_proof_at_a_resource_is_401(error: InvalidDpopProofError | UseDpopNonceError) -> None:
    err = challenged(error, PRM, scheme="DPoP")
    assert err.status_code == 401
    assert f'DPoP error="{error.error}"' in err.headers["WWW-Authenticate"]
