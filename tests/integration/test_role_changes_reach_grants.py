"""Finding 1 (high): role changes did not reach existing grants. A demoted admin's
refresh tokens kept minting access tokens with the old role's scopes for the grant's
whole life. Now the role caps every grant at every use, and a change that takes write
access away ends the grants holding it, fed at once to the resource servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from courseschool.authz.endpoints.admin import AdminService

from .api_env import ApiEnv
from .flow import Lifecycle, pkce_pair, query_of


@pytest.fixture
async def env(open_api_env) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


def _admin(env: ApiEnv) -> AdminService:
    return AdminService(env.flow.client.app.state.authz.administration, actor="admin-cli")


async def _refused_within_a_second(env: ApiEnv, token: str) -> bool:
    """The resource API refuses the token once the revocation feed has carried it."""
    for _ in range(50):
        response = await env.api.get("/api/v1/school", headers=env.bearer(token))
        if response.status_code == 401 and response.json()["error"] == "invalid_token":
            return True
        await asyncio.sleep(0.02)
    return False


async def _tokens(env: ApiEnv, role: str, scope: str) -> tuple[dict, dict, dict]:
    school = await env.school("acme")
    user = await env.flow.user(role, school=school)
    reg = await env.flow.register()
    env.flow.client.cookies.clear()
    return user, reg, await env.flow.tokens(reg, user, scope=scope)


async def test_demotion_ends_grants_with_write_access(env: ApiEnv) -> None:
    user, reg, tokens = await _tokens(env, "admin", "openid school:read school:write")
    written = await env.api.patch("/api/v1/school", json={"name": "Acme"}, headers=env.bearer(tokens["access_token"]))
    assert written.status_code == 200

    result = await _admin(env).set_role(user["email"], "lecturer")
    assert result["role"] == "lecturer" and result["grants_ended"] == 1

    assert await _refused_within_a_second(env, tokens["access_token"])
    refreshed = await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    assert await env.pool.fetchval("SELECT revoke_reason FROM authz_grants") == "role_changed"


async def test_refresh_is_narrowed_to_the_current_role(env: ApiEnv) -> None:
    # No write scope in this grant: it lives on, but a refresh yields only what a student may have.
    user, reg, tokens = await _tokens(env, "owner", "openid school:read courses:read")
    assert tokens["scope"] == "openid courses:read school:read"
    assert (await _admin(env).set_role(user["email"], "student"))["grants_ended"] == 0

    refreshed = await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    body = refreshed.json()
    assert body["scope"] == "openid"
    read = await env.api.get("/api/v1/school", headers=env.bearer(body["access_token"]))
    assert read.status_code == 403 and read.json()["error"] == "insufficient_scope"


async def test_a_code_issued_before_the_demotion_is_capped_at_exchange(env: ApiEnv) -> None:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    reg = await env.flow.register()
    verifier, challenge = pkce_pair()
    params = env.flow.authorize_params(reg, challenge, scope="openid courses:read")
    start = await env.flow.start(params)
    interaction = start.headers["location"]
    await env.flow.login(interaction, user)
    done = await env.flow.consent(interaction)
    code = query_of(done.headers["location"])["code"]

    await _admin(env).set_role(user["email"], "student")  # no write in this grant: it lives on
    exchanged = await env.flow.exchange(reg, code, verifier)
    assert exchanged.status_code == 200, exchanged.text
    assert exchanged.json()["scope"] == "openid"


async def test_a_code_holding_a_lost_write_scope_is_refused(env: ApiEnv) -> None:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    reg = await env.flow.register()
    verifier, challenge = pkce_pair()
    start = await env.flow.start(env.flow.authorize_params(reg, challenge, scope="openid courses:write"))
    interaction = start.headers["location"]
    await env.flow.login(interaction, user)
    code = query_of((await env.flow.consent(interaction)).headers["location"])["code"]
    await _admin(env).set_role(user["email"], "student")
    exchanged = await env.flow.exchange(reg, code, verifier)
    assert exchanged.status_code == 400 and exchanged.json()["error"] == "invalid_grant"


async def test_nothing_left_to_grant_refuses_the_refresh(env: ApiEnv) -> None:
    user, reg, tokens = await _tokens(env, "owner", "courses:read")
    await _admin(env).set_role(user["email"], "student")
    refreshed = await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"


async def test_promotion_ends_nothing(env: ApiEnv) -> None:
    user, reg, tokens = await _tokens(env, "lecturer", "openid courses:write")
    assert (await _admin(env).set_role(user["email"], "owner"))["grants_ended"] == 0
    assert (await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])).status_code == 200


async def test_disabling_a_user_ends_access(env: ApiEnv) -> None:
    user, reg, tokens = await _tokens(env, "owner", "openid school:read")
    result = await _admin(env).disable_user(user["email"])
    assert result["disabled"] is True and result["grants_ended"] == 1
    assert await _refused_within_a_second(env, tokens["access_token"])
    refreshed = await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    # The browser's sign-in session ended with it.
    _, challenge = pkce_pair()
    silent = await env.flow.start(env.flow.authorize_params(reg, challenge, prompt="none"))
    assert query_of(silent.headers["location"])["error"] == "login_required"
