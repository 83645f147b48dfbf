"""Minting tokens: RFC 9068 access-token claims, OIDC ID token with at_hash and nonce."""

from __future__ import annotations

import base64
import hashlib

import pytest

from courseschool.authz.protocol.tokens import (
    TokenPolicy,
    access_token_claims,
    at_hash,
    id_token_claims,
    mint,
    require_proof_if_bound,
)
from courseschool.common.errors import InvalidRequestError

from .factories import RecordingSigner, make_client, make_grant, make_user

POLICY = TokenPolicy(issuer="http://127.0.0.1:8000", access_token_ttl=600, id_token_ttl=900)
NOW = 1_700_000_100
RESOURCE = "http://127.0.0.1:8000"


def _independent_at_hash(token: str) -> str:
    left = hashlib.sha256(token.encode("ascii")).digest()[:16]
    return base64.urlsafe_b64encode(left).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        # OIDC Core 1.0 Appendix A.4 example; the others computed independently with hashlib.
        ("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", "77QmUPtjPfzWtF2AnpK9RQ"),
        ("abc", "ungWv48Bz-pBQUDeXa4iIw"),
        ("", "47DEQpj8HBSa-_TImW-5JA"),
    ],
)
def test_at_hash_is_left_half_of_sha256_base64url(token: str, expected: str) -> None:
    assert at_hash(token) == expected
    assert len(at_hash(token)) == 22  # 16 bytes unpadded


def test_access_token_claims_carry_rfc9068_and_school_claims() -> None:
    grant = make_grant(id="g-9", client_id="c-9", user_id="u-9", school_id="s-9", auth_time=NOW - 50)
    claims = access_token_claims(POLICY, grant=grant, scope="openid courses:read", resource=RESOURCE, now=NOW)
    assert claims["iss"] == "http://127.0.0.1:8000"
    assert claims["sub"] == "u-9"
    assert claims["aud"] == RESOURCE
    assert claims["client_id"] == "c-9"
    assert claims["scope"] == "openid courses:read"
    assert claims["iat"] == NOW
    assert claims["nbf"] == NOW
    assert claims["exp"] == NOW + 600
    assert claims["auth_time"] == NOW - 50
    assert claims["school_id"] == "s-9"
    assert claims["grant_id"] == "g-9"
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16


def test_access_token_jti_is_unique_per_token() -> None:
    grant = make_grant()
    jtis = {
        access_token_claims(POLICY, grant=grant, scope="openid", resource=RESOURCE, now=NOW)["jti"] for _ in range(50)
    }
    assert len(jtis) == 50


@pytest.mark.parametrize("nonce", ["n-0S6_WzA2Mj", None])
def test_id_token_claims_follow_oidc_core(nonce: str | None) -> None:
    grant = make_grant(client_id="c-9", auth_time=NOW - 5)
    user = make_user(id="u-9")
    claims = id_token_claims(POLICY, grant=grant, user=user, nonce=nonce, access_token="tok", now=NOW)
    assert claims["iss"] == POLICY.issuer
    assert claims["sub"] == "u-9"
    assert claims["aud"] == "c-9"
    assert claims["azp"] == "c-9"
    assert claims["iat"] == NOW
    assert claims["exp"] == NOW + 900
    assert claims["auth_time"] == NOW - 5
    assert claims["at_hash"] == _independent_at_hash("tok")
    if nonce is None:
        assert "nonce" not in claims
    else:
        assert claims["nonce"] == nonce


@pytest.mark.parametrize(
    ("scope", "wants_id_token"),
    [
        ("openid", True),
        ("openid profile courses:read", True),
        ("courses:read openid", True),
        ("profile email courses:read", False),
        ("courses:read", False),
        ("openidx profile", False),  # a scope name, not a substring
    ],
)
def test_mint_adds_id_token_only_when_openid_is_granted(scope: str, wants_id_token: bool) -> None:
    signer = RecordingSigner()
    client = make_client(client_id="client-1", id_token_signed_response_alg="ES256")
    grant = make_grant(client_id="client-1", user_id="user-1")
    out = mint(
        POLICY,
        signer,
        client=client,
        grant=grant,
        user=make_user(id="user-1"),
        scope=scope,
        resource=RESOURCE,
        nonce="abc",
        refresh_token="rt-1",
        now=NOW,
    )
    assert out.access_token == f"at.user-1.{RESOURCE}.{scope.replace(' ', '+')}"
    assert out.token_type == "Bearer"
    assert out.expires_in == 600
    assert out.scope == scope
    assert out.refresh_token == "rt-1"
    assert len(signer.access_claims) == 1
    if wants_id_token:
        assert out.id_token == "id.ES256.client-1.abc"
        ((claims, alg),) = signer.id_claims
        assert alg == "ES256"  # the client's registered algorithm
        assert claims["at_hash"] == _independent_at_hash(out.access_token)  # hash of the token actually issued
    else:
        assert out.id_token is None
        assert signer.id_claims == []


def test_mint_without_refresh_token_leaves_it_out() -> None:
    out = mint(
        POLICY,
        RecordingSigner(),
        client=make_client(),
        grant=make_grant(),
        user=make_user(),
        scope="courses:read",
        resource=RESOURCE,
        nonce=None,
        refresh_token=None,
        now=NOW,
    )
    assert out.refresh_token is None


def test_without_a_proof_key_the_token_is_a_bearer_token_without_cnf() -> None:
    signer = RecordingSigner()
    out = mint(
        POLICY,
        signer,
        client=make_client(),
        grant=make_grant(),
        user=make_user(),
        scope="courses:read",
        resource=RESOURCE,
        nonce=None,
        refresh_token=None,
        now=NOW,
    )
    assert out.token_type == "Bearer" and "cnf" not in signer.access_claims[0]


def test_a_client_registered_dpop_bound_must_send_a_proof() -> None:
    require_proof_if_bound(make_client(), None)
    require_proof_if_bound(make_client(dpop_bound_access_tokens=True), "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    with pytest.raises(InvalidRequestError, match="dpop_bound_access_tokens"):
        require_proof_if_bound(make_client(dpop_bound_access_tokens=True), None)
