"""The refresh_token grant: rotation, reuse detection, the retry window, lifetimes,
narrowing, and races (RFC 6749 §6, RFC 9700 §4.14.2)."""

from __future__ import annotations

import asyncio

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from .flow import BASE_URL, Flow, Lifecycle


@pytest.fixture
def life(flow: Flow) -> Lifecycle:
    return Lifecycle(flow)


async def _start(flow: Flow, **extra: str) -> tuple[dict, dict]:
    reg = await flow.register()
    return reg, await flow.tokens(reg, **extra)


async def test_refresh_rotates_and_the_new_token_works(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    response = await life.refresh(reg, first["refresh_token"])
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    second = response.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert second["scope"] == first["scope"]
    assert "id_token" in second
    assert await life.userinfo_status(second["access_token"]) == 200
    third = await life.refresh(reg, second["refresh_token"])
    assert third.status_code == 200


async def test_immediate_retry_gets_the_same_answer(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    a = await life.refresh(reg, first["refresh_token"])
    b = await life.refresh(reg, first["refresh_token"])
    assert a.status_code == b.status_code == 200
    assert a.json() == b.json()
    assert await flow.count("authz_refresh_tokens") == 2  # one lineage: the original and its successor
    assert await life.userinfo_status(a.json()["access_token"]) == 200


async def test_reuse_after_the_grace_window_revokes_the_grant(flow: Flow, life: Lifecycle, clock) -> None:
    reg, first = await _start(flow)
    second = (await life.refresh(reg, first["refresh_token"])).json()
    clock.advance(11)
    reuse = await life.refresh(reg, first["refresh_token"])
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    assert (await life.refresh(reg, second["refresh_token"])).status_code == 400
    assert await life.userinfo_status(second["access_token"]) == 401
    assert await flow.count("authz_grants WHERE revoke_reason = 'refresh_reused'") == 1


async def test_reuse_once_the_successor_was_used_revokes_the_grant(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    second = (await life.refresh(reg, first["refresh_token"])).json()
    third = (await life.refresh(reg, second["refresh_token"])).json()
    reuse = await life.refresh(reg, first["refresh_token"])
    assert reuse.status_code == 400
    assert (await life.refresh(reg, third["refresh_token"])).status_code == 400


async def test_parallel_refreshes_leave_one_lineage(flow: Flow, life: Lifecycle) -> None:
    for _ in range(5):
        reg, first = await _start(flow)
        results = await asyncio.gather(*(life.refresh(reg, first["refresh_token"]) for _ in range(8)))
        assert all(r.status_code == 200 for r in results), [r.text for r in results]
        assert len({r.json()["refresh_token"] for r in results}) == 1
        live = await flow.pool.fetchval(
            "SELECT count(*) FROM authz_refresh_tokens rt JOIN authz_grants g ON g.id = rt.grant_id "
            "WHERE g.client_id = $1 AND rt.consumed_at IS NULL AND g.revoked_at IS NULL",
            reg["client_id"],
        )
        assert live == 1


async def test_scope_may_narrow_but_not_widen(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow, scope="openid courses:read members:read")
    narrow = await life.refresh(reg, first["refresh_token"], scope="courses:read")
    assert narrow.status_code == 200 and narrow.json()["scope"] == "courses:read"
    assert "id_token" not in narrow.json()
    wide = await life.refresh(reg, narrow.json()["refresh_token"], scope="courses:read coupons:write")
    assert wide.status_code == 400 and wide.json()["error"] == "invalid_scope"
    # the refused request rotated nothing: the same token still works, with its full scope
    again = await life.refresh(reg, narrow.json()["refresh_token"])
    assert again.status_code == 200 and again.json()["scope"] == "openid courses:read members:read"


@pytest.mark.parametrize(
    ("extra", "status", "error"),
    [
        ({"resource": "https://other.example"}, 400, "invalid_target"),
        ({"scope": "school:write"}, 400, "invalid_scope"),
        ({"client_id": "someone-else"}, 401, "invalid_client"),
        ({"refresh_token": "unknown-token"}, 400, "invalid_grant"),
    ],
)
async def test_refused_refresh_rotates_nothing(
    flow: Flow, life: Lifecycle, extra: dict, status: int, error: str
) -> None:
    reg, first = await _start(flow)
    token = extra.pop("refresh_token", first["refresh_token"])
    response = await life.refresh(reg, token, **extra)
    assert response.status_code == status and response.json()["error"] == error
    assert await flow.count("authz_refresh_tokens WHERE consumed_at IS NOT NULL") == 0
    assert (await life.refresh(reg, first["refresh_token"])).status_code == 200


async def test_refresh_token_of_another_client_is_refused(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    other = await flow.register()
    response = await life.refresh(other, first["refresh_token"])
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    assert (await life.refresh(reg, first["refresh_token"])).status_code == 200


async def test_resource_may_be_named_and_stays_bound(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    response = await life.refresh(reg, first["refresh_token"], resource=BASE_URL + "/")
    assert response.status_code == 200
    keys = KeySet.import_key_set((await flow.client.get("/api/oauth/jwks")).json())
    assert jwt.decode(response.json()["access_token"], keys).claims["aud"] == BASE_URL


async def test_idle_refresh_token_expires(flow: Flow, life: Lifecycle, clock) -> None:
    reg, first = await _start(flow)
    clock.advance(14 * 86400 + 1)
    response = await life.refresh(reg, first["refresh_token"])
    assert response.status_code == 400 and "expired" in response.json()["error_description"]


async def test_grant_ends_at_its_absolute_lifetime_however_often_refreshed(flow: Flow, life: Lifecycle, clock) -> None:
    reg, tokens = await _start(flow)
    for _ in range(6):  # 6 x 13 = 78 days: each refresh within the idle limit
        clock.advance(13 * 86400)
        response = await life.refresh(reg, tokens["refresh_token"])
        assert response.status_code == 200
        tokens = response.json()
    clock.advance(13 * 86400)
    response = await life.refresh(reg, tokens["refresh_token"])
    assert response.status_code == 400 and "expired" in response.json()["error_description"]


async def test_disabled_user_cannot_refresh(flow: Flow, life: Lifecycle) -> None:
    reg = await flow.register()
    user = await flow.user()
    tokens = await flow.tokens(reg, user)
    await flow.pool.execute("UPDATE authz_users SET disabled_at = now() WHERE id = $1::uuid", user["id"])
    response = await life.refresh(reg, tokens["refresh_token"])
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


async def test_deleted_client_ends_its_grants(flow: Flow, life: Lifecycle) -> None:
    reg, tokens = await _start(flow)
    await flow.pool.execute("DELETE FROM authz_clients WHERE client_id = $1", reg["client_id"])
    assert await flow.count("authz_grants") == 0
    assert await life.userinfo_status(tokens["access_token"]) == 401


async def test_replayed_answer_is_not_readable_from_the_database(flow: Flow, life: Lifecycle) -> None:
    reg, first = await _start(flow)
    second = (await life.refresh(reg, first["refresh_token"])).json()
    sealed = await flow.pool.fetchval("SELECT replay FROM authz_refresh_tokens WHERE replay IS NOT NULL")
    assert sealed and second["access_token"].encode() not in sealed
    assert second["refresh_token"].encode() not in sealed
