"""One record of events, queryable: sign-ins, consents, security events and the
administrators' actions are kept in `authz_events` with their kind, actor, source address,
client and school, and read back through the admin API and the CLI with filters and
pages. Retention removes only what is past it; a bad filter is a 400 that says why."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from courseschool.authz.endpoints.admin import AdminService

from .admin_api import ADMIN, admin_cli, admin_get
from .flow import Flow, Lifecycle


async def _written(flow: Flow) -> None:
    """The recorder writes in batches off the request: wait for what was heard."""
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]


async def _events(flow: Flow, query: str = "") -> list[dict[str, Any]]:
    await _written(flow)
    return await admin_get(flow.client, f"/audit?limit=500{'&' + query if query else ''}")


def _actions(events: list[dict[str, Any]]) -> list[str]:
    return [e["action"] for e in events]


async def test_sign_ins_consents_and_their_endings_are_kept_with_who_where_client_and_school(
    admin_flow: Flow,
) -> None:
    flow, life = admin_flow, Lifecycle(admin_flow)
    school = await flow.school("evented")
    user = await flow.user("owner", school=school)
    reg = await flow.register(client_name="Evented CLI")
    # A failed sign-in, then a successful one and a consent; a denial; a code reused;
    # a refresh token reused; the person removing the app; the client deleting itself.
    _, _, _ = await flow.authorize(reg, user, decision="deny")
    flow.client.cookies.clear()
    start = await flow.start(flow.authorize_params(reg, "x" * 43))
    failed = await flow.login(start.headers["location"], user, password="not the password")
    assert failed.status_code == 303
    flow.client.cookies.clear()
    callback, verifier, _ = await flow.authorize(reg, user)
    tokens = (await flow.exchange(reg, callback["code"], verifier)).json()
    assert (await flow.exchange(reg, callback["code"], verifier)).status_code == 400  # code reused
    callback, verifier, _ = await flow.authorize(reg, user)
    second = (await flow.exchange(reg, callback["code"], verifier)).json()
    rotated = (await life.refresh(reg, second["refresh_token"])).json()
    assert (await life.refresh(reg, rotated["refresh_token"])).status_code == 200
    assert (await life.refresh(reg, second["refresh_token"])).status_code == 400  # refresh reused
    assert tokens["access_token"]

    events = await _events(flow, f"user={user['email']}")
    actions = _actions(events)
    for expected in ("login_failed", "login_succeeded", "consent_given", "consent_denied", "code_reused"):
        assert expected in actions, (expected, actions)
    ended = [e for e in events if e["action"] == "grant_revoked"]
    assert {e["details"]["reason"] for e in ended} >= {"code_reused", "refresh_reused"}
    for event in events:
        assert event["subject"] == user["id"] and event["school_id"] == school, event
    signed_in = next(e for e in events if e["action"] == "login_succeeded")
    assert signed_in["kind"] == "user" and signed_in["source"] == "127.0.0.1"
    assert signed_in["client_id"] == reg["client_id"]
    reused = next(e for e in events if e["action"] == "refresh_reused")
    assert reused["kind"] == "security" and reused["client_id"] == reg["client_id"]
    # The reuses came from an address like every other call (issue 38: code_reused had none).
    for action in ("code_reused", "refresh_reused"):
        assert next(e for e in events if e["action"] == action)["source"] == "127.0.0.1", action
    security = await _events(flow, "kind=security&action=refresh_reused")
    assert [e["id"] for e in security] == [reused["id"]]
    assert "refresh_token" not in msgspec.json.encode(events).decode()


async def test_clients_registered_changed_and_deleted_are_security_events(admin_flow: Flow) -> None:
    flow = admin_flow
    reg = await flow.register(client_name="Short-lived")
    config = reg["registration_client_uri"].removeprefix("http://127.0.0.1:8000")
    auth = {"Authorization": f"Bearer {reg['registration_access_token']}"}
    body = {"client_id": reg["client_id"], "redirect_uris": reg["redirect_uris"], "client_name": "Renamed"}
    assert (await flow.client.put(config, headers=auth, json=body)).status_code == 200
    assert (await flow.client.delete(config, headers=auth)).status_code == 204
    events = await _events(flow, f"client={reg['client_id']}")
    assert _actions(events) == ["client_deleted", "client_updated", "client_registered"]
    assert {e["kind"] for e in events} == {"security"}
    assert all(e["source"] for e in events if e["action"] == "client_registered")


async def test_grants_ended_by_the_person_an_admin_a_role_change_and_a_password_reset(admin_flow: Flow) -> None:
    flow = admin_flow
    admin = AdminService(flow.client.app.state.authz.administration, actor="admin", source="10.0.0.9")  # type: ignore[attr-defined]
    user = await flow.user("owner")
    for n in range(4):
        flow.client.cookies.clear()
        reg = await flow.register(client_name=f"Ended Four Ways {n}")
        await flow.tokens(reg, user, scope="openid courses:read courses:write")
    grants = await flow.pool.fetch("SELECT id::text FROM authz_grants WHERE revoked_at IS NULL ORDER BY created_at")
    by_person = grants[0]["id"]
    await flow.client.app.state.authz.revoker.revoke_grant(by_person, reason="removed_by_user")  # type: ignore[attr-defined]
    await admin.revoke_grant(grants[1]["id"])
    await admin.set_role(user["email"], "student")  # takes courses:write away: ends the rest
    await admin.reset_password(user["email"], "a brand new long password 77")
    events = await _events(flow, f"user={user['email']}&action=grant_revoked")
    reasons = {e["details"]["reason"] for e in events}
    assert {"removed_by_user", "revoked_by_admin", "role_changed"} <= reasons, reasons
    admin_actions = _actions(await _events(flow, "kind=admin"))
    assert {"grant_revoked_by_admin", "user_role_set", "password_reset"} <= set(admin_actions)
    by_person_event = next(e for e in events if e["details"]["reason"] == "removed_by_user")
    assert by_person_event["actor"] == "user" and by_person_event["kind"] == "user"
    role_changed = [e for e in events if e["details"]["reason"] == "role_changed"]
    assert role_changed and all(e["kind"] == "security" for e in role_changed)


async def test_the_cli_reads_the_same_record_with_filters_and_pages(
    database_url: str, redis_url: str, kek: str, admin_flow: Flow
) -> None:
    flow, life = admin_flow, Lifecycle(admin_flow)
    reg = await flow.register(client_name="Paged CLI")
    user = await flow.user("owner")
    first = await flow.tokens(reg, user)
    rotated = (await life.refresh(reg, first["refresh_token"])).json()
    assert (await life.refresh(reg, rotated["refresh_token"])).status_code == 200
    assert (await life.refresh(reg, first["refresh_token"])).status_code == 400
    await _written(flow)

    def cli(*args: str) -> list[dict[str, Any]]:
        done = admin_cli(database_url, redis_url, kek, "--json", "audit", "list", *args)
        assert done.returncode == 0, done.stderr
        return msgspec.json.decode(done.stdout)

    reused = await asyncio.to_thread(cli, "--kind", "security", "--action", "refresh_reused")
    assert len(reused) == 1 and reused[0]["client_id"] == reg["client_id"] and reused[0]["subject"] == user["id"]
    client = f"--client={reg['client_id']}"  # one value even when the random id begins with "-"
    everything = await asyncio.to_thread(cli, client)
    page = await asyncio.to_thread(cli, client, "--limit", "2")
    rest = await asyncio.to_thread(cli, client, "--before", str(page[-1]["id"]))
    assert [e["id"] for e in page + rest] == [e["id"] for e in everything]
    assert len(everything) > 2


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("kind=everything", 400, "kind must be one of"),
        ("since=yesterday", 400, "since must be an ISO 8601"),
        ("until=soon", 400, "until must be an ISO 8601"),
        ("since=2026-11-02&until=2026-11-01", 400, "until must be later than since"),
        ("before=-1", 400, "before must be an event id"),
        ("before=99999999999999999999999", 400, "before must be an event id"),
        ("limit=501", 400, "limit must be 1 to 500"),
        ("school=no-such-school", 404, "no school"),
        ("user=nobody@example.test", 404, "no user"),
    ],
)
async def test_a_bad_filter_is_refused_with_a_clear_message(
    admin_flow: Flow, query: str, status: int, says: str
) -> None:
    response = await admin_flow.client.get(f"/internal/admin/audit?{query}", headers=ADMIN)
    assert response.status_code == status, response.text
    assert says in response.json()["error_description"]


async def test_filters_by_school_and_time(admin_flow: Flow) -> None:
    flow = admin_flow
    here = await flow.user("owner", school=await flow.school("here"))
    there = await flow.user("owner", school=await flow.school("there"))
    reg = await flow.register()
    for person in (here, there):
        flow.client.cookies.clear()
        await flow.tokens(reg, person)
    at_here = await _events(flow, "school=here")
    assert at_here and {e["subject"] for e in at_here} == {here["id"]}
    assert await _events(flow, "since=2999-01-01") == []
    assert await _events(flow, "until=2000-01-01") == []


async def test_retention_removes_only_events_past_it(admin_flow: Flow) -> None:
    flow = admin_flow
    await flow.register(client_name="Old and new")
    await _written(flow)
    await flow.pool.execute("UPDATE authz_events SET at = now() - interval '400 days'")
    await flow.register(client_name="Recent")
    await _written(flow)
    assert await flow.count("authz_events") == 2
    done = await flow.client.app.state.authz.housekeeping.sweep()  # type: ignore[attr-defined]
    assert done["events"] == 1
    (kept,) = await _events(flow)
    assert kept["action"] == "client_registered" and kept["details"] == {"auth_method": "none"}


@pytest.fixture
async def strict_flow(authz_settings: Any, clean_db: Any, redis_client: Any) -> Any:
    """An authorization server with the admin API on, a lockout after two failures and
    one live grant per user and app (so that the events of both are easy to cause)."""
    from courseschool.authz.app import create_app

    from .admin_api import with_admin
    from .conftest import serve

    settings = msgspec.structs.replace(with_admin(authz_settings), login_lockout_threshold=2, grants_per_app=1)
    async with serve(create_app(settings)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_every_kind_of_event_is_read_back_through_the_cli_and_the_api(
    strict_flow: Flow, database_url: str, redis_url: str, kek: str
) -> None:
    """Sign-in succeeded and failed, a lockout, consent given and denied, a step-up, grants
    ended by the person, an administrator, a password reset and a supersession, a code
    reused, a refresh token reused, a client registered, changed and deleted: each caused
    here, each read back by the API and by `admin audit list`."""
    flow, life = strict_flow, Lifecycle(strict_flow)
    admin = AdminService(flow.client.app.state.authz.administration, actor="admin", source="10.0.0.9")  # type: ignore[attr-defined]
    user = await flow.user("owner")
    reg = await flow.register(client_name="Every Event")
    await flow.authorize(reg, user, decision="deny")  # consent_denied (and login_succeeded)
    callback, verifier, _ = await flow.authorize(reg, user)  # consent_given
    first = (await flow.exchange(reg, callback["code"], verifier)).json()
    assert (await flow.exchange(reg, callback["code"], verifier)).status_code == 400  # code_reused
    callback, verifier, _ = await flow.authorize(reg, user, scope="openid courses:read courses:write")
    second = (await flow.exchange(reg, callback["code"], verifier)).json()  # the first ended with its code
    callback, verifier, _ = await flow.authorize(reg, user)  # a step-up of the second: profile, email
    third = (await flow.exchange(reg, callback["code"], verifier)).json()  # supersedes the second
    assert (await life.refresh(reg, second["refresh_token"])).status_code == 400
    rotated = (await life.refresh(reg, third["refresh_token"])).json()
    assert (await life.refresh(reg, rotated["refresh_token"])).status_code == 200
    assert (await life.refresh(reg, third["refresh_token"])).status_code == 400  # refresh_reused
    callback, verifier, _ = await flow.authorize(reg, user)
    fourth = (await flow.exchange(reg, callback["code"], verifier)).json()
    grant = await flow.pool.fetchval("SELECT id::text FROM authz_grants WHERE revoked_at IS NULL")
    await flow.client.app.state.authz.revoker.revoke_grant(grant, reason="removed_by_user")  # type: ignore[attr-defined]
    callback, verifier, _ = await flow.authorize(reg, user)
    await flow.exchange(reg, callback["code"], verifier)
    grant = await flow.pool.fetchval("SELECT id::text FROM authz_grants WHERE revoked_at IS NULL")
    await admin.revoke_grant(grant)
    callback, verifier, _ = await flow.authorize(reg, user)
    await flow.exchange(reg, callback["code"], verifier)
    await admin.reset_password(user["email"], "another long password 1234")
    flow.client.cookies.clear()
    start = await flow.start(flow.authorize_params(reg, "x" * 43))
    for _ in range(3):  # login_failed twice, then the address is locked out of the account
        await flow.login(start.headers["location"], user, password="not it")
    config = reg["registration_client_uri"].removeprefix("http://127.0.0.1:8000")
    auth = {"Authorization": f"Bearer {reg['registration_access_token']}"}
    body = {"client_id": reg["client_id"], "redirect_uris": reg["redirect_uris"], "client_name": "Renamed"}
    assert (await flow.client.put(config, headers=auth, json=body)).status_code == 200
    assert (await flow.client.delete(config, headers=auth)).status_code == 204
    assert first and fourth

    expected_actions = {
        "login_succeeded", "login_failed", "account_locked", "consent_given", "consent_denied", "step_up",
        "code_reused", "refresh_reused", "grant_revoked", "client_registered", "client_updated", "client_deleted",
        "grant_revoked_by_admin", "password_reset",
    }  # fmt: skip
    expected_reasons = {
        "removed_by_user",
        "revoked_by_admin",
        "password_reset",
        "superseded",
        "code_reused",
        "refresh_reused",
    }
    through_api = await _events(flow)
    await _written(flow)
    done = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, "--json", "audit", "list", "--limit", "500")
    assert done.returncode == 0, done.stderr
    through_cli = msgspec.json.decode(done.stdout)
    for listed in (through_api, through_cli):
        actions = {e["action"] for e in listed}
        assert expected_actions <= actions, expected_actions - actions
        reasons = {e["details"].get("reason") for e in listed if e["action"] == "grant_revoked"}
        assert expected_reasons <= reasons, expected_reasons - reasons
        for event in listed:
            assert {"kind", "actor", "source", "client_id", "school_id", "at"} <= set(event), event
    assert [e["id"] for e in through_cli if e["id"] in {x["id"] for x in through_api}]  # one record, two readers
    locked = next(e for e in through_api if e["action"] == "account_locked")
    assert locked["kind"] == "security" and locked["source"] == "127.0.0.1"
    steps = [e for e in through_api if e["action"] == "step_up"]
    assert steps and all(e["details"]["added"] for e in steps) and {e["kind"] for e in steps} == {"user"}
