"""Revocation (RFC 7009) and introspection (RFC 7662), and the revocation feed."""

from __future__ import annotations

import asyncio

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from courseschool.common.revocation import grant_key, jti_key

from .flow import BASE_URL, Flow, Lifecycle


@pytest.fixture
def life(flow: Flow) -> Lifecycle:
    return Lifecycle(flow)


async def _claims(flow: Flow, token: str) -> dict:
    keys = KeySet.import_key_set((await flow.client.get("/api/oauth/jwks")).json())
    return jwt.decode(token, keys).claims


async def _resource_server(flow: Flow) -> dict:
    return await flow.integration("Resource server")


async def test_revoking_a_refresh_token_ends_the_whole_grant(flow: Flow, life: Lifecycle) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    response = await life.revoke(reg, tokens["refresh_token"], token_type_hint="refresh_token")
    assert response.status_code == 200 and response.content == b""
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 400
    assert await life.userinfo_status(tokens["access_token"]) == 401
    claims = await _claims(flow, tokens["access_token"])
    assert await flow.redis.exists(grant_key(claims["grant_id"])) == 1


async def test_revoking_an_access_token_denies_it_and_keeps_the_grant(flow: Flow, life: Lifecycle) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    response = await life.revoke(reg, tokens["access_token"])  # no hint: looked up anyway
    assert response.status_code == 200
    assert await life.userinfo_status(tokens["access_token"]) == 401
    claims = await _claims(flow, tokens["access_token"])
    assert await flow.count(f"authz_revoked_access_tokens WHERE jti = '{claims['jti']}'") == 1
    ttl = await flow.redis.ttl(jti_key(claims["jti"]))
    assert 0 < ttl <= 600 + 120
    refreshed = await life.refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 200
    assert await life.userinfo_status(refreshed.json()["access_token"]) == 200


@pytest.mark.parametrize("token", ["unknown-token", "eyJhbGciOiJFUzI1NiJ9.e30.sig"])
async def test_unknown_token_is_answered_200(flow: Flow, life: Lifecycle, token: str) -> None:
    reg = await flow.register()
    assert (await life.revoke(reg, token)).status_code == 200


async def test_another_clients_token_is_not_revoked(flow: Flow, life: Lifecycle) -> None:
    owner = await flow.register()
    tokens = await flow.tokens(owner)
    other = await flow.register()
    assert (await life.revoke(other, tokens["refresh_token"])).status_code == 200
    assert (await life.revoke(other, tokens["access_token"])).status_code == 200
    assert await life.userinfo_status(tokens["access_token"]) == 200
    assert (await life.refresh(owner, tokens["refresh_token"])).status_code == 200


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        ({"token": ""}, 400, "invalid_request"),
        ({"client_id": ""}, 401, "invalid_client"),
        ({"client_id": "nobody"}, 401, "invalid_client"),
    ],
)
async def test_malformed_revocation_is_refused(
    flow: Flow, life: Lifecycle, form: dict, status: int, error: str
) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    token = form.pop("token", tokens["refresh_token"])
    response = await life.revoke(reg, token, **form)
    assert response.status_code == status and response.json()["error"] == error
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 200


async def test_confidential_client_must_authenticate_to_revoke(flow: Flow, life: Lifecycle) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_post")
    tokens = await flow.tokens(reg)
    response = await life.revoke(reg, tokens["refresh_token"], client_secret="wrong")
    assert response.status_code == 401
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 200


async def test_revocation_racing_refreshes_leaves_nothing_alive(flow: Flow, life: Lifecycle) -> None:
    for _ in range(5):
        reg = await flow.register()
        tokens = await flow.tokens(reg)
        results = await asyncio.gather(
            *(life.refresh(reg, tokens["refresh_token"]) for _ in range(4)),
            life.revoke(reg, tokens["refresh_token"]),
            *(life.refresh(reg, tokens["refresh_token"]) for _ in range(4)),
        )
        assert all(r.status_code < 500 for r in results)
        issued = [r.json() for r in results if r.status_code == 200 and r.content]
        for body in issued:
            assert (await life.refresh(reg, body["refresh_token"])).status_code == 400
            assert await life.userinfo_status(body["access_token"]) == 401
        live = await flow.pool.fetchval(
            "SELECT count(*) FROM authz_grants WHERE client_id = $1 AND revoked_at IS NULL", reg["client_id"]
        )
        assert live == 0


async def test_introspection_shows_an_active_access_token(flow: Flow, life: Lifecycle) -> None:
    rs = await _resource_server(flow)
    user = await flow.user()
    tokens = await flow.tokens(user=user, scope="openid courses:read")
    body = await life.introspect(rs, tokens["access_token"])
    assert body["active"] is True
    assert body["scope"] == "openid courses:read"
    assert body["sub"] == user["id"] and body["aud"] == BASE_URL and body["iss"] == BASE_URL
    assert body["token_type"] == "Bearer" and body["school_id"] == user["school_id"]
    assert {"client_id", "exp", "iat"} <= set(body)


async def test_introspection_of_inactive_tokens_says_only_active_false(flow: Flow, life: Lifecycle, clock) -> None:
    rs = await _resource_server(flow)
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    other_rt = (await flow.tokens()).get("refresh_token")
    assert await life.introspect(rs, "garbage") == {"active": False}
    assert await life.introspect(rs, tokens["id_token"]) == {"active": False}
    assert await life.introspect(rs, tokens["refresh_token"]) == {"active": False}  # another client's
    assert await life.introspect(rs, other_rt) == {"active": False}
    await life.revoke(reg, tokens["access_token"])
    assert await life.introspect(rs, tokens["access_token"]) == {"active": False}
    fresh = (await life.refresh(reg, tokens["refresh_token"])).json()
    clock.advance(601)
    assert await life.introspect(rs, fresh["access_token"]) == {"active": False}


async def test_introspection_of_own_refresh_token(flow: Flow, life: Lifecycle) -> None:
    rs = await _resource_server(flow)
    tokens = await flow.tokens(rs)
    body = await life.introspect(rs, tokens["refresh_token"])
    assert body["active"] is True and body["token_type"] == "refresh_token"
    await life.refresh(rs, tokens["refresh_token"])
    assert await life.introspect(rs, tokens["refresh_token"]) == {"active": False}  # consumed


async def test_public_clients_may_not_introspect(flow: Flow) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    response = await flow.client.post(
        "/api/oauth/introspect", data={"token": tokens["access_token"], "client_id": reg["client_id"]}
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
