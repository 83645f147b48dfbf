"""UserInfo (OIDC Core §5.3) and its bearer-token errors (RFC 6750 §3)."""

from __future__ import annotations

import pytest

from .flow import BASE_URL, Flow

METADATA = f'resource_metadata="{BASE_URL}/.well-known/oauth-protected-resource"'


async def test_userinfo_returns_only_what_the_scopes_allow(flow: Flow) -> None:
    user = await flow.user()
    tokens = await flow.tokens(user=user, scope="openid")
    for method in ("GET", "POST"):
        response = await flow.client.request(
            method, "/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
        )
        assert response.status_code == 200
        assert response.json() == {"sub": user["id"]}
        assert response.headers["cache-control"] == "no-store"


async def test_email_scope_adds_email_claims(flow: Flow) -> None:
    user = await flow.user()
    tokens = await flow.tokens(user=user, scope="openid email")
    body = (
        await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    ).json()
    assert body == {"sub": user["id"], "email": user["email"], "email_verified": True}


async def test_no_token_is_challenged_without_an_error_code(flow: Flow) -> None:
    response = await flow.client.get("/api/oauth/userinfo")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and METADATA in challenge
    assert "error=" not in challenge


async def test_token_in_the_query_string_is_ignored(flow: Flow) -> None:
    tokens = await flow.tokens()
    response = await flow.client.get(f"/api/oauth/userinfo?access_token={tokens['access_token']}")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer not-a-jwt",
        "Bearer eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0.eyJzdWIiOiJ4In0.",
        "Basic Zm9vOmJhcg==",
        "Bearer",
    ],
)
async def test_bad_token_is_invalid_token_with_a_challenge(flow: Flow, authorization: str) -> None:
    response = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_token"
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge and METADATA in challenge


async def test_id_token_is_not_accepted_as_an_access_token(flow: Flow) -> None:
    tokens = await flow.tokens()
    response = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['id_token']}"})
    assert response.status_code == 401 and response.json()["error"] == "invalid_token"


async def test_tampered_token_is_refused(flow: Flow) -> None:
    tokens = await flow.tokens()
    head, payload, sig = tokens["access_token"].split(".")
    tampered = f"{head}.{payload[:-2]}AA.{sig}"
    response = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {tampered}"})
    assert response.status_code == 401


async def test_expired_token_is_refused(flow: Flow, clock) -> None:
    tokens = await flow.tokens()
    clock.advance(601)
    response = await flow.client.get(
        "/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert response.status_code == 401 and "expired" in response.json()["error_description"]


async def test_token_without_openid_is_insufficient_scope(flow: Flow) -> None:
    tokens = await flow.tokens(scope="courses:read")
    response = await flow.client.get(
        "/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="openid"' in challenge and METADATA in challenge


async def test_disabled_user_token_stops_working(flow: Flow) -> None:
    user = await flow.user()
    tokens = await flow.tokens(user=user)
    await flow.pool.execute("UPDATE authz_users SET disabled_at = now() WHERE id = $1::uuid", user["id"])
    response = await flow.client.get(
        "/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert response.status_code == 401
