"""Bearer tokens at the resource API, in both validation modes: every way a token can
be wrong is 401 invalid_token with a challenge, never anonymous; revocation reaches
the resource server at once; losing Redis degrades to asking the authorization server."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

import msgspec
import pytest

from courseschool.authz.components import Components
from courseschool.common.jose import generate_signing_key, sign_jwt

from ..support.infra import kill_pubsub_connections
from .api_env import ApiEnv
from .flow import BASE_URL
from .tcp_proxy import TcpProxy, redis_proxy

METADATA = f'resource_metadata="{BASE_URL}/.well-known/oauth-protected-resource"'


@pytest.fixture(params=["jwt", "introspection"])
async def env(request, open_api_env) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode=request.param) as running:
        yield running


def _authz(env: ApiEnv) -> Components:
    return env.flow.client.app.state.authz


async def _claims(env: ApiEnv, token: str) -> dict:
    payload = token.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def _assert_invalid(response) -> None:
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "invalid_token"
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge and METADATA in challenge


async def test_valid_token_reads_its_schools_data(env: ApiEnv) -> None:
    token = await env.token("courses:read")
    response = await env.api.get("/api/v1/courses", headers=env.bearer(token))
    assert response.status_code == 200 and response.json() == {"items": [], "next_cursor": None}


async def test_expired_token_is_refused(env: ApiEnv, clock) -> None:
    token = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    clock.advance(600 + 31)  # past exp and the leeway
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))


async def test_clock_skew_within_the_leeway_is_tolerated(env: ApiEnv, clock) -> None:
    token = await env.token("courses:read")
    clock.advance(600 + 20)  # expired by 20 s at the resource server's clock
    if env.rs_app.state.resource_api.verifier.mode == "jwt":
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200


async def test_revoked_access_token_is_refused_within_a_second(env: ApiEnv) -> None:
    token = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200  # now cached
    revoked = await env.flow.client.post("/api/oauth/revoke", data={"token": token, "client_id": env.reg["client_id"]})
    assert revoked.status_code == 200
    for _ in range(50):
        response = await env.api.get("/api/v1/courses", headers=env.bearer(token))
        if response.status_code == 401:
            break
        await asyncio.sleep(0.02)
    _assert_invalid(response)


async def test_revoked_grant_refuses_its_access_tokens(env: ApiEnv) -> None:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    reg = await env.flow.register()
    tokens = await env.flow.tokens(reg, user, scope="courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(tokens["access_token"]))).status_code == 200
    await env.flow.client.post(
        "/api/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": reg["client_id"]}
    )
    for _ in range(50):
        response = await env.api.get("/api/v1/courses", headers=env.bearer(tokens["access_token"]))
        if response.status_code == 401:
            break
        await asyncio.sleep(0.02)
    _assert_invalid(response)


async def test_tampered_and_malformed_tokens_are_refused(env: ApiEnv) -> None:
    token = await env.token("courses:read")
    head, payload, sig = token.split(".")
    claims = await _claims(env, token)
    claims["scope"] = "courses:read courses:write school:write"
    forged_payload = base64.urlsafe_b64encode(msgspec.json.encode(claims)).rstrip(b"=").decode()
    none_header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"at+jwt"}').rstrip(b"=").decode()
    for bad in (
        f"{head}.{forged_payload}.{sig}",
        f"{none_header}.{payload}.",
        "not-a-token",
        token[:-4] + "AAAA",
    ):
        _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(bad)))


async def test_token_signed_by_a_stranger_is_refused(env: ApiEnv) -> None:
    token = await env.token("courses:read")
    claims = await _claims(env, token)
    _, private, _ = generate_signing_key("ES256")
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(sign_jwt(claims, private, typ="at+jwt"))))


@pytest.mark.parametrize(
    "change",
    [{"iss": "https://evil.example"}, {"aud": "https://other.example"}, {"school_id": None}],
    ids=["wrong-issuer", "wrong-audience", "no-school"],
)
async def test_well_signed_token_with_wrong_claims_is_refused(env: ApiEnv, change: dict) -> None:
    token = await env.token("courses:read")
    claims = {**await _claims(env, token), **change}
    claims = {k: v for k, v in claims.items() if v is not None}
    forged = _authz(env).keys.ring.sign_access_token(claims)  # the real key: only the claims are wrong
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(forged)))


async def test_id_token_is_not_an_access_token(env: ApiEnv) -> None:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    tokens = await env.flow.tokens(await env.flow.register(), user, scope="openid courses:read")
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(tokens["id_token"])))


async def test_token_in_the_query_string_is_ignored(env: ApiEnv) -> None:
    token = await env.token("students:read")
    response = await env.api.get(f"/api/v1/students?access_token={token}")
    assert response.status_code == 403 and "www-authenticate" not in response.headers


async def test_other_authorization_schemes_are_invalid_tokens(env: ApiEnv) -> None:
    _assert_invalid(await env.api.get("/api/v1/courses", headers={"Authorization": "Basic Zm9vOmJhcg=="}))


async def test_new_signing_key_is_fetched_on_an_unknown_kid(env: ApiEnv) -> None:
    first = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(first))).status_code == 200
    service = _authz(env)
    await service.keys.store.rotate_now("ES256", immediate=True)
    await service.keys.maintain()
    second = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(second))).status_code == 200
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(first))).status_code == 200


async def test_introspection_answers_are_cached_no_longer_than_the_token_lives(
    open_api_env, clock, redis_client
) -> None:
    async with open_api_env(mode="introspection") as env:
        token = await env.token("courses:read")
        clock.advance(500)  # 100 s of life left
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
        keys = [k async for k in redis_client.scan_iter(match="rs:introspection:*")]
        assert len(keys) == 1
        assert 0 < await redis_client.ttl(keys[0]) <= 100
        assert token.encode() not in keys[0]


@pytest.mark.parametrize("mode", ["jwt", "introspection"])
async def test_without_redis_the_resource_server_asks_the_authorization_server(mode, open_api_env) -> None:
    async with open_api_env(mode=mode, rs_redis_url="redis://127.0.0.1:1/0") as env:
        assert env.rs_app.state.resource_api.verifier.feed.healthy is False
        token = await env.token("courses:read")
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
        assert (await env.api.get("/api/v1/courses?school=acme")).status_code == 200  # anonymous unaffected
        await env.flow.client.post("/api/oauth/revoke", data={"token": token, "client_id": env.reg["client_id"]})
        _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))


async def test_unknown_kids_refetch_the_jwks_at_most_once_per_interval(open_api_env) -> None:
    async with open_api_env(mode="jwt", jwks_refetch=3600) as env:
        token = await env.token("courses:read")
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
        fetches = env.authz_calls.count("/api/oauth/jwks")
        claims = await _claims(env, token)
        for n in range(5):  # a flood of tokens naming kids nobody published
            _, private, _ = generate_signing_key("ES256")
            private["kid"] = f"unknown-{n}"
            forged = sign_jwt(claims, private, typ="at+jwt")
            _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(forged)))
        assert env.authz_calls.count("/api/oauth/jwks") == fetches


async def test_revocation_feed_recovers_after_losing_its_connection(env: ApiEnv, redis_client) -> None:
    feed = env.rs_app.state.resource_api.verifier.feed
    token = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    await kill_pubsub_connections(redis_client)
    await env.flow.client.post("/api/oauth/revoke", data={"token": token, "client_id": env.reg["client_id"]})
    # whether the feed is down (every token introspected) or back (set reloaded), the token is refused
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))
    assert await feed.wait_healthy(5.0)
    claims = await _claims(env, token)
    assert feed.revoked(feed_principal(claims))
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))


@pytest.fixture(params=["jwt", "introspection"])
async def proxied(request, open_api_env, redis_url) -> AsyncIterator[tuple[ApiEnv, TcpProxy]]:
    """The resource API reaching Redis through a proxy that can hold its reconnections."""
    async with (
        redis_proxy(redis_url) as proxy,
        open_api_env(mode=request.param, rs_redis_url=proxy.url) as running,
    ):
        assert await running.rs_app.state.resource_api.verifier.feed.wait_healthy()
        yield running, proxy


async def test_a_lost_feed_is_distrusted_before_it_reconnects(proxied: tuple[ApiEnv, TcpProxy], redis_client) -> None:
    """The feed counts as lost when its connection drops, not once a reconnection has
    succeeded or failed: a revocation published in between never reaches it."""
    env, proxy = proxied
    feed = env.rs_app.state.resource_api.verifier.feed
    token = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200  # now held in memory
    assert await feed.wait_healthy(10.0)  # its first subscription may still be on its way on a busy machine
    assert await _feed_gauge(env) == 1.0
    proxy.hold_new_connections()  # a reconnection takes as long as the test wants
    await kill_pubsub_connections(redis_client)
    await env.flow.client.post("/api/oauth/revoke", data={"token": token, "client_id": env.reg["client_id"]})
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))  # the server was asked
    assert not feed.healthy
    assert await _feed_gauge(env) == 0.0  # what the operator's alert watches
    proxy.release_new_connections()
    assert await feed.wait_healthy(5.0)
    assert await _feed_gauge(env) == 1.0
    assert feed.revoked(feed_principal(await _claims(env, token)))  # the reload found what the feed missed
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))


async def _feed_gauge(env: ApiEnv) -> float | None:
    """The resource API's courseschool_revocation_feed_healthy sample (None when absent)."""
    for line in (await env.api.get("/metrics")).text.splitlines():
        if line.startswith('courseschool_revocation_feed_healthy{service="resource_api"} '):
            return float(line.rsplit(" ", 1)[1])
    return None


def feed_principal(claims: dict):
    from courseschool.resource_api.auth.verifier import principal_from_claims

    return principal_from_claims(claims)


async def test_a_flushed_redis_does_not_make_revoked_tokens_good_again(env: ApiEnv, redis_client) -> None:
    feed = env.rs_app.state.resource_api.verifier.feed
    token = await env.token("courses:read")
    await env.flow.client.post("/api/oauth/revoke", data={"token": token, "client_id": env.reg["client_id"]})
    await redis_client.flushdb()  # the revocation keys are gone from Redis...
    await kill_pubsub_connections(redis_client)  # ...and the feed reloads
    await asyncio.sleep(0.3)
    assert await feed.wait_healthy(5.0)
    assert feed.revoked(feed_principal(await _claims(env, token)))  # reloaded from the authorization server
    _assert_invalid(await env.api.get("/api/v1/courses", headers=env.bearer(token)))
