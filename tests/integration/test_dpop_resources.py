"""DPoP-bound tokens at the resource API (RFC 9449 §7), in both validation modes: the
DPoP scheme with a proof per request (the verified-token cache never skips the proof),
the refusals (bound token as Bearer, replayed proof, wrong htu or htm, stale iat,
missing ath, another key), each a 401 with the DPoP challenge beside the Bearer one;
server nonces (§9); bearer tokens as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.common.clock import FrozenClock

from ..support.dpop_proofs import DpopKey
from .api_env import ApiEnv
from .flow import BASE_URL

COURSES = f"{BASE_URL}/api/v1/courses"
TOKEN_URL = f"{BASE_URL}/api/oauth/token"
ALGS = 'algs="ES256 Ed25519 EdDSA RS256 PS256"'


@pytest.fixture(params=["jwt", "introspection"])
async def env(request, open_api_env) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode=request.param) as running:
        yield running


async def bound_token(env: ApiEnv, key: DpopKey, clock: FrozenClock, scope: str = "courses:read") -> str:
    """An access token bound to `key`: the code flow, exchanged with a proof."""
    school_id = await env.school("acme")
    user = await env.flow.user("owner", school=school_id)
    reg = await env.flow.register()
    env.flow.client.cookies.clear()
    callback, verifier, _ = await env.flow.authorize(reg, user, scope=scope)
    form = {
        "grant_type": "authorization_code",
        "code": callback["code"],
        "redirect_uri": reg["redirect_uris"][0],
        "client_id": reg["client_id"],
        "code_verifier": verifier,
    }
    proof = key.proof("POST", TOKEN_URL, iat=clock.now())
    response = await env.flow.client.post("/api/oauth/token", data=form, headers={"DPoP": proof})
    assert response.status_code == 200 and response.json()["token_type"] == "DPoP", response.text
    return response.json()["access_token"]


def dpop_headers(token: str, proof: str) -> dict[str, str]:
    return {"Authorization": f"DPoP {token}", "DPoP": proof}


def _refused(response: Any, error: str, scheme: str) -> None:
    assert response.status_code == 401, response.text
    assert response.json()["error"] == error
    challenge = response.headers["www-authenticate"]
    assert f'{scheme} error="{error}"' in challenge, challenge
    assert challenge.startswith("Bearer ") and ", DPoP " in challenge and ALGS in challenge


async def test_a_bound_token_works_with_a_fresh_proof_each_time(env: ApiEnv, clock: FrozenClock) -> None:
    key = DpopKey()
    token = await bound_token(env, key, clock)
    first = key.proof("GET", COURSES, iat=clock.now(), access_token=token)
    assert (await env.api.get("/api/v1/courses", headers=dpop_headers(token, first))).status_code == 200
    second = key.proof("GET", COURSES, iat=clock.now(), access_token=token)  # the token is cached now
    assert (await env.api.get("/api/v1/courses", headers=dpop_headers(token, second))).status_code == 200
    replayed = await env.api.get("/api/v1/courses", headers=dpop_headers(token, first))
    _refused(replayed, "invalid_dpop_proof", "DPoP")
    no_proof = await env.api.get("/api/v1/courses", headers={"Authorization": f"DPoP {token}"})
    _refused(no_proof, "invalid_dpop_proof", "DPoP")


async def test_a_bound_token_sent_as_bearer_is_refused(env: ApiEnv, clock: FrozenClock) -> None:
    key = DpopKey()
    token = await bound_token(env, key, clock)
    proof = key.proof("GET", COURSES, iat=clock.now(), access_token=token)
    response = await env.api.get("/api/v1/courses", headers={"Authorization": f"Bearer {token}", "DPoP": proof})
    _refused(response, "invalid_token", "Bearer")


async def test_each_broken_proof_is_refused(env: ApiEnv, clock: FrozenClock) -> None:
    key = DpopKey()
    token = await bound_token(env, key, clock)
    now = clock.now()
    cases = {
        "wrong htu": (key.proof("GET", f"{BASE_URL}/api/v1/posts", iat=now, access_token=token), "invalid_dpop_proof"),
        "wrong htm": (key.proof("POST", COURSES, iat=now, access_token=token), "invalid_dpop_proof"),
        "stale iat": (key.proof("GET", COURSES, iat=now - 61, access_token=token), "invalid_dpop_proof"),
        "missing ath": (key.proof("GET", COURSES, iat=now), "invalid_dpop_proof"),
        "another key": (DpopKey().proof("GET", COURSES, iat=now, access_token=token), "invalid_token"),
    }
    for name, (proof, error) in cases.items():
        response = await env.api.get("/api/v1/courses", headers=dpop_headers(token, proof))
        assert response.status_code == 401, name
        _refused(response, error, "DPoP")
    good = key.proof("GET", COURSES + "?limit=1", iat=now, access_token=token)  # the query does not count
    assert (await env.api.get("/api/v1/courses?limit=1", headers=dpop_headers(token, good))).status_code == 200


async def test_a_bearer_token_with_the_dpop_scheme_is_refused(env: ApiEnv, clock: FrozenClock) -> None:
    token = await env.token("courses:read")
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    proof = DpopKey().proof("GET", COURSES, iat=clock.now(), access_token=token)
    _refused(await env.api.get("/api/v1/courses", headers=dpop_headers(token, proof)), "invalid_token", "DPoP")


async def test_a_missing_scope_is_answered_in_the_dpop_challenge(env: ApiEnv, clock: FrozenClock) -> None:
    key = DpopKey()
    token = await bound_token(env, key, clock)
    proof = key.proof("GET", f"{BASE_URL}/api/v1/orders", iat=clock.now(), access_token=token)
    response = await env.api.get("/api/v1/orders", headers=dpop_headers(token, proof))
    assert response.status_code == 403 and response.json()["error"] == "insufficient_scope"
    assert 'DPoP error="insufficient_scope"' in response.headers["www-authenticate"]
    assert 'scope="orders:read"' in response.headers["www-authenticate"]


async def test_protected_resource_metadata_lists_the_dpop_algorithms(env: ApiEnv) -> None:
    doc = (
        await env.api.get(
            "/internal/metadata/oauth-protected-resource", headers={"Authorization": "Bearer internal-test-token"}
        )
    ).json()
    assert doc["dpop_signing_alg_values_supported"] == ["ES256", "Ed25519", "EdDSA", "RS256", "PS256"]
    assert doc["dpop_bound_access_tokens_required"] is False


@pytest.mark.parametrize("mode", ["jwt", "introspection"])
async def test_a_required_nonce_at_the_resource_is_a_401_with_the_nonce(
    open_api_env, clock: FrozenClock, mode: str
) -> None:
    async with open_api_env(mode=mode, resource_settings={"dpop_nonce_required": True}) as env:
        key = DpopKey()
        token = await bound_token(env, key, clock)
        asked = await env.api.get(
            "/api/v1/courses",
            headers=dpop_headers(token, key.proof("GET", COURSES, iat=clock.now(), access_token=token)),
        )
        _refused(asked, "use_dpop_nonce", "DPoP")
        nonce = asked.headers["dpop-nonce"]
        proof = key.proof("GET", COURSES, iat=clock.now(), access_token=token, nonce=nonce)
        assert (await env.api.get("/api/v1/courses", headers=dpop_headers(token, proof))).status_code == 200
