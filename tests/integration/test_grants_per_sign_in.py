"""One grant per sign-in, not per app (issue 24): a client id may be shared by every
install (metadata documents, integrations, ids shipped in binaries), so each code
exchange starts its own lineage and the user's other grants of that client stay. At most
GRANTS_PER_APP live grants per user and client: one more ends the least recently used
(`superseded`). A new grant replaces an earlier one only when it is bound to the same
DPoP key (`replaced`: provably the same install). Reuse detection, revocation and the
feed to resource servers still work per lineage."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest
import structlog

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.revocation import grant_key

from ..support.dpop_proofs import DpopKey
from .apps_page import FIREFOX_LINUX, SAFARI_MAC, browser
from .conftest import serve
from .flow import Flow, Lifecycle
from .test_dpop import Dpop


async def live_grants(flow: Flow, user: dict[str, str]) -> set[str]:
    rows = await flow.pool.fetch(
        "SELECT id::text FROM authz_grants WHERE user_id = $1::uuid AND revoked_at IS NULL", user["id"]
    )
    return {r["id"] for r in rows}


async def reason(flow: Flow, grant_id: str) -> str | None:
    return await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE id = $1::uuid", grant_id)


async def sign_in(
    flow: Flow,
    reg: dict[str, Any],
    user: dict[str, str],
    *,
    address: str = "127.0.0.1",
    agent: str | None = None,
    **extra: str,
) -> dict[str, Any]:
    """A sign-in on another computer: a fresh browser approves, the app exchanges the
    code. Its tokens and its grant id."""
    async with browser(flow, address, agent) as device:
        callback, verifier, _ = await device.authorize(reg, user, **extra)
        exchanged = await device.exchange(reg, callback["code"], verifier)
    assert exchanged.status_code == 200, exchanged.text
    tokens = exchanged.json()
    return {"tokens": tokens, "grant_id": _claims(tokens["access_token"])["grant_id"]}


def _claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


async def test_two_sign_ins_of_one_client_both_stay_and_both_refresh(flow: Flow, clock) -> None:
    user = await flow.user()
    reg = await flow.register(client_name="Shared Agent")  # one client id on every computer
    life = Lifecycle(flow)
    laptop = await sign_in(flow, reg, user, address="198.51.100.23", agent=FIREFOX_LINUX)
    clock.advance(60)
    desktop = await sign_in(flow, reg, user, address="203.0.113.9", agent=SAFARI_MAC)
    assert laptop["grant_id"] != desktop["grant_id"]
    assert await live_grants(flow, user) == {laptop["grant_id"], desktop["grant_id"]}
    for device in (laptop, desktop, laptop):  # each lineage rotates on its own
        refreshed = await life.refresh(reg, device["tokens"]["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text
        device["tokens"] = refreshed.json()
        assert await life.userinfo_status(device["tokens"]["access_token"]) == 200
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL") == 0
    stored = await flow.pool.fetch(
        "SELECT created_from, created_agent FROM authz_grants WHERE user_id = $1::uuid ORDER BY created_at", user["id"]
    )
    assert [tuple(r) for r in stored] == [("198.51.100.23", "Firefox on Linux"), ("203.0.113.9", "Safari on macOS")]
    assert await flow.count("authz_grants WHERE created_agent LIKE '%Mozilla%'") == 0  # the header itself is not kept


async def test_past_the_bound_the_least_recently_used_sign_in_ends(flow: Flow, clock) -> None:
    user, other = await flow.user(), await flow.user()
    reg = await flow.register()
    life = Lifecycle(flow)
    someone_elses = await sign_in(flow, reg, other)
    devices = []
    for _ in range(10):
        clock.advance(60)
        devices.append(await sign_in(flow, reg, user))
    assert len(await live_grants(flow, user)) == 10
    clock.advance(60)
    refreshed = await life.refresh(reg, devices[0]["tokens"]["refresh_token"])  # the oldest is used again
    assert refreshed.status_code == 200
    clock.advance(60)
    with structlog.testing.capture_logs() as events:
        eleventh = await sign_in(flow, reg, user)
    least_recent = devices[1]["grant_id"]
    assert await live_grants(flow, user) == {d["grant_id"] for d in devices if d is not devices[1]} | {
        eleventh["grant_id"]
    }
    assert await reason(flow, least_recent) == "superseded"
    assert await flow.redis.exists(grant_key(least_recent))  # fed to the resource servers
    ended = [e for e in events if e["event"] == "grant_revoked"]
    assert [(e["grant_id"], e["reason"], e["actor"], e.get("audit")) for e in ended] == [
        (least_recent, "superseded", "system", True)
    ]
    gone = await life.refresh(reg, devices[1]["tokens"]["refresh_token"])
    assert gone.status_code == 400 and gone.json()["error"] == "invalid_grant"
    assert await life.userinfo_status(devices[1]["tokens"]["access_token"]) == 401
    assert (await life.refresh(reg, refreshed.json()["refresh_token"])).status_code == 200
    assert await reason(flow, someone_elses["grant_id"]) is None  # another person's sign-ins are not counted


async def test_an_approval_never_exchanged_is_not_counted_nor_ended(flow: Flow, clock) -> None:
    """Only exchanged grants hold access; a waiting approval neither counts towards the
    bound nor is ended by it (its code may still be on its way to the app)."""
    user = await flow.user()
    reg = await flow.register()
    async with browser(flow) as slow:
        waiting, verifier, _ = await slow.authorize(reg, user)
        for _ in range(10):
            clock.advance(5)
            await sign_in(flow, reg, user)
        assert (await slow.exchange(reg, waiting["code"], verifier)).status_code == 200
    assert len(await live_grants(flow, user)) == 10
    assert await flow.count("authz_grants WHERE revoke_reason = 'superseded'") == 1


async def test_the_bound_is_a_setting(authz_settings: AuthzSettings, clean_db, redis_client, clock) -> None:
    settings = msgspec.structs.replace(authz_settings, grants_per_app=2)
    async with serve(create_app(settings, clock=clock)) as c:
        flow = Flow(c, clean_db, redis_client)
        user = await flow.user()
        reg = await flow.register()
        first = await sign_in(flow, reg, user)
        clock.advance(1)
        second = await sign_in(flow, reg, user)
        clock.advance(1)
        third = await sign_in(flow, reg, user)
        assert await live_grants(flow, user) == {second["grant_id"], third["grant_id"]}
        assert await reason(flow, first["grant_id"]) == "superseded"
    with pytest.raises(ValueError, match="GRANTS_PER_APP"):
        AuthzSettings(**{**msgspec.structs.asdict(authz_settings), "grants_per_app": 0})


async def test_a_dpop_bound_sign_in_with_the_same_key_replaces_only_that_grant(flow: Flow, clock) -> None:
    dpop = Dpop(flow, clock)
    user = await flow.user()
    reg = await flow.register()
    life = Lifecycle(flow)
    key, other_key = DpopKey(), DpopKey()
    bound = await _dpop_sign_in(flow, dpop, reg, user, key)
    other_bound = await _dpop_sign_in(flow, dpop, reg, user, other_key)
    unbound = await sign_in(flow, reg, user)
    assert len(await live_grants(flow, user)) == 3  # a different key, or none: one more sign-in

    with structlog.testing.capture_logs() as events:
        step_up = await _dpop_sign_in(flow, dpop, reg, user, key, scope="openid courses:read courses:write")
    assert step_up["tokens"]["scope"] == "openid courses:read courses:write"
    assert await live_grants(flow, user) == {other_bound["grant_id"], unbound["grant_id"], step_up["grant_id"]}
    assert await reason(flow, bound["grant_id"]) == "replaced"
    assert await flow.redis.exists(grant_key(bound["grant_id"]))
    assert [(e["grant_id"], e["reason"]) for e in events if e["event"] == "grant_revoked"] == [
        (bound["grant_id"], "replaced")
    ]
    old = await dpop.post(dpop.refresh_form(reg, bound["tokens"]["refresh_token"]), key)
    assert old.status_code == 400 and old.json()["error"] == "invalid_grant"
    assert (
        await dpop.post(dpop.refresh_form(reg, other_bound["tokens"]["refresh_token"]), other_key)
    ).status_code == 200
    assert (await life.refresh(reg, unbound["tokens"]["refresh_token"])).status_code == 200


async def test_a_sign_in_bound_to_a_key_another_user_used_replaces_nothing(flow: Flow, clock) -> None:
    dpop = Dpop(flow, clock)
    ann, bob = await flow.user(), await flow.user()
    reg = await flow.register()
    key = DpopKey()
    anns = await _dpop_sign_in(flow, dpop, reg, ann, key)
    await _dpop_sign_in(flow, dpop, reg, bob, key)
    assert await reason(flow, anns["grant_id"]) is None


async def _dpop_sign_in(
    flow: Flow, dpop: Dpop, reg: dict[str, Any], user: dict[str, str], key: DpopKey, **extra: str
) -> dict[str, Any]:
    async with browser(flow) as device:
        form = await Dpop(device, dpop.clock).code(reg, user, **extra)
    response = await dpop.post(form, key)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "DPoP"
    return {"tokens": tokens, "grant_id": _claims(tokens["access_token"])["grant_id"]}


async def test_reuse_detection_ends_only_its_own_lineage(flow: Flow, clock) -> None:
    user = await flow.user()
    reg = await flow.register()
    life = Lifecycle(flow)
    stolen, other = await sign_in(flow, reg, user), await sign_in(flow, reg, user)
    rotated = await life.refresh(reg, stolen["tokens"]["refresh_token"])
    assert rotated.status_code == 200
    clock.advance(60)  # past the grace window: presenting the old token again is reuse
    reused = await life.refresh(reg, stolen["tokens"]["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert await reason(flow, stolen["grant_id"]) == "refresh_reused"
    assert (await life.refresh(reg, rotated.json()["refresh_token"])).status_code == 400
    assert await reason(flow, other["grant_id"]) is None
    assert (await life.refresh(reg, other["tokens"]["refresh_token"])).status_code == 200


async def test_revoking_one_refresh_token_leaves_the_other_sign_in_working(flow: Flow) -> None:
    user = await flow.user()
    reg = await flow.register()
    life = Lifecycle(flow)
    revoked, kept = await sign_in(flow, reg, user), await sign_in(flow, reg, user)
    assert (await life.revoke(reg, revoked["tokens"]["refresh_token"])).status_code == 200
    assert await reason(flow, revoked["grant_id"]) == "revoked_by_client"
    assert (await life.refresh(reg, revoked["tokens"]["refresh_token"])).status_code == 400
    assert await life.userinfo_status(revoked["tokens"]["access_token"]) == 401
    assert (await life.refresh(reg, kept["tokens"]["refresh_token"])).status_code == 200
    assert await life.userinfo_status(kept["tokens"]["access_token"]) == 200


async def test_an_integrations_sign_ins_share_its_remembered_consent(flow: Flow) -> None:
    """A second computer signing in to an integration uses the consent the first gave,
    and both keep working; the remembered consent survives a sign-in superseded."""
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    user = await flow.user()
    life = Lifecycle(flow)
    first = await sign_in(flow, integration, user, scope="openid courses:read")
    second = await sign_in(flow, integration, user, scope="openid courses:read")
    assert await flow.count("authz_consents") == 1
    for device in (first, second):
        assert (await life.refresh(integration, device["tokens"]["refresh_token"])).status_code == 200
