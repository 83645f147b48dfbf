"""Administration over the internal admin API and the command line: schools, users,
integrations, clients, grants, keys; every action an audit event without secrets."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import httpx
import msgspec
import pytest
import structlog

from courseschool.authz.endpoints.registration import remove_unused_clients

from .admin_api import ADMIN, admin_cli, admin_get, admin_post, with_admin
from .api_env import ApiEnv
from .flow import BASE_URL, PASSWORD, Flow, pkce_pair, query_of

HTTPS_CALLBACK = "https://partner.example.com/oauth/callback"


async def test_admin_api_needs_the_admin_credential(admin_flow: Flow, flow: Flow) -> None:
    """`flow` runs an app without ADMIN_TOKEN: there the admin API does not exist."""
    assert (await admin_flow.client.get("/internal/admin/schools")).status_code == 401
    wrong = await admin_flow.client.get("/internal/admin/schools", headers={"Authorization": "Bearer " + "x" * 40})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_token"
    assert (await flow.client.get("/internal/admin/schools", headers=ADMIN)).status_code == 404


async def test_school_and_user_created_by_the_admin_can_sign_in(admin_flow: Flow) -> None:
    client = admin_flow.client
    school = await admin_post(client, "/schools", {"slug": "north-academy", "name": "North Academy"})
    assert school["slug"] == "north-academy"
    duplicate = await client.post("/internal/admin/schools", json={"slug": "north-academy", "name": "x"}, headers=ADMIN)
    assert duplicate.status_code == 409
    user = await admin_post(
        client, "/users", {"school": "north-academy", "email": "Teacher@North.test", "name": "T", "role": "lecturer"}
    )
    assert len(user["password"]) >= 16 and user["role"] == "lecturer"
    reg = await admin_flow.register()
    tokens = await admin_flow.tokens(
        reg, {"email": "teacher@north.test", "password": user["password"]}, scope="openid courses:write school:write"
    )
    assert tokens["scope"] == "openid courses:write"  # a lecturer's cap
    listed = await admin_get(client, "/users?school=north-academy")
    assert [u["email"] for u in listed] == ["Teacher@North.test"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"school": "nowhere", "email": "a@b.test", "name": "A", "role": "student"}, 404),
        ({"school": "acme", "email": "not-an-email", "name": "A", "role": "student"}, 400),
        ({"school": "acme", "email": "a@b.test", "name": "A", "role": "superuser"}, 400),
        ({"school": "acme", "email": "a@b.test", "name": "A", "role": "student", "password": "short"}, 400),
        ({"school": "acme", "email": "a@b.test", "name": "A", "role": "student", "extra": 1}, 400),
    ],
)
async def test_refused_user_creation_stores_nothing(admin_flow: Flow, body: dict, status: int) -> None:
    await admin_flow.school("acme")
    response = await admin_flow.client.post("/internal/admin/users", json=body, headers=ADMIN)
    assert response.status_code == status
    assert await admin_flow.count("authz_users") == 0


async def test_role_change_and_password_reset(admin_flow: Flow) -> None:
    user = await admin_flow.user("student")
    changed = await admin_post(admin_flow.client, f"/users/{user['email']}/role", {"role": "admin"})
    assert changed["role"] == "admin"
    reset = await admin_post(admin_flow.client, f"/users/{user['id']}/reset-password", {})
    assert reset["password"] != PASSWORD
    tokens = await admin_flow.tokens(user={"email": user["email"], "password": reset["password"]}, scope="school:write")
    assert tokens["scope"] == "school:write"


async def test_integration_with_https_callback_completes_a_flow_and_remembers_consent(admin_flow: Flow) -> None:
    integration = await admin_post(
        admin_flow.client,
        "/integrations",
        {
            "name": "Partner CRM",
            "redirect_uris": [HTTPS_CALLBACK],
            "scope": "openid courses:read",
        },
    )
    assert integration["is_integration"] is True and integration["client_secret"]
    reg = {
        "client_id": integration["client_id"],
        "client_secret": integration["client_secret"],
        "redirect_uris": [HTTPS_CALLBACK],
    }
    user = await admin_flow.user()
    callback, verifier, _ = await admin_flow.authorize(reg, user, scope="openid courses:read courses:write")
    assert callback["iss"] == BASE_URL
    first = await admin_flow.exchange(reg, callback["code"], verifier)
    assert first.status_code == 200 and first.json()["scope"] == "openid courses:read"  # capped by the integration
    # The same person again: consent was remembered, so no page at all.
    verifier, challenge = pkce_pair()
    params = admin_flow.authorize_params(reg, challenge, scope="openid courses:read")
    again = await admin_flow.start(params)
    assert again.status_code == 303 and again.headers["location"].startswith(HTTPS_CALLBACK + "?")
    code = query_of(again.headers["location"])["code"]
    assert (await admin_flow.exchange(reg, code, verifier)).status_code == 200
    forced = await admin_flow.start(admin_flow.authorize_params(reg, challenge, prompt="consent"))
    assert forced.headers["location"].startswith("/oauth/interaction/")


async def test_public_clients_never_skip_consent(admin_flow: Flow) -> None:
    reg = await admin_flow.register()
    user = await admin_flow.user()
    await admin_flow.tokens(reg, user)
    _, challenge = pkce_pair()
    again = await admin_flow.start(admin_flow.authorize_params(reg, challenge))
    assert again.headers["location"].startswith("/oauth/interaction/")
    assert await admin_flow.count("authz_consents") == 0


@pytest.mark.parametrize("uris", [["http://partner.example.com/cb"], ["https://partner.example.com/cb#x"], []])
async def test_integration_needs_https_callbacks(admin_flow: Flow, uris: list[str]) -> None:
    response = await admin_flow.client.post(
        "/internal/admin/integrations", json={"name": "X", "redirect_uris": uris}, headers=ADMIN
    )
    assert response.status_code == 400 and await admin_flow.count("authz_clients") == 0


@pytest.mark.parametrize("method", ["none", "private_key_jwt", ""])
async def test_an_integration_always_has_a_secret_method(admin_flow: Flow, method: str) -> None:
    response = await admin_flow.client.post(
        "/internal/admin/integrations",
        json={"name": "Partner API", "redirect_uris": [HTTPS_CALLBACK], "auth_method": method},
        headers=ADMIN,
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert "auth_method" in response.json()["error_description"]
    assert await admin_flow.count("authz_clients") == 0


async def test_an_integration_made_for_http_basic_gets_tokens_with_the_header(admin_flow: Flow) -> None:
    made = await admin_post(
        admin_flow.client,
        "/integrations",
        {"name": "Partner API", "redirect_uris": [HTTPS_CALLBACK], "auth_method": "client_secret_basic"},
    )
    assert made["token_endpoint_auth_method"] == "client_secret_basic"
    reg = {"client_id": made["client_id"], "redirect_uris": [HTTPS_CALLBACK]}
    callback, verifier, _ = await admin_flow.authorize(reg, await admin_flow.user())
    secret = httpx.BasicAuth(made["client_id"], made["client_secret"])
    form = {
        "grant_type": "authorization_code",
        "code": callback["code"],
        "redirect_uri": HTTPS_CALLBACK,
        "code_verifier": verifier,
    }
    issued = await admin_flow.client.post("/api/oauth/token", data=form, auth=secret)
    assert issued.status_code == 200, issued.text


async def test_clients_listed_shown_disabled_and_deleted(admin_flow: Flow) -> None:
    reg = await admin_flow.register()
    tokens = await admin_flow.tokens(reg)
    listed = await admin_get(admin_flow.client, "/clients")
    assert [c["client_id"] for c in listed] == [reg["client_id"]] and listed[0]["live_grants"] == 1
    disabled = await admin_post(admin_flow.client, f"/clients/{reg['client_id']}/disable")
    assert disabled["disabled"] is True and disabled["grants_ended"] == 1
    assert (
        await admin_flow.client.get(
            "/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
        )
    ).status_code == 401
    deleted = await admin_flow.client.delete(f"/internal/admin/clients/{reg['client_id']}", headers=ADMIN)
    assert deleted.status_code == 200 and await admin_flow.count("authz_clients") == 0
    assert (
        await admin_flow.client.get(f"/internal/admin/clients/{reg['client_id']}", headers=ADMIN)
    ).status_code == 404


async def test_grants_listed_and_revoked(admin_flow: Flow) -> None:
    user = await admin_flow.user()
    tokens = await admin_flow.tokens(user=user)
    grants = await admin_get(admin_flow.client, f"/grants?user={user['email']}")
    assert len(grants) == 1
    await admin_post(admin_flow.client, f"/grants/{grants[0]['id']}/revoke")
    assert await admin_get(admin_flow.client, f"/grants?user={user['email']}") == []
    assert len(await admin_get(admin_flow.client, f"/grants?user={user['email']}&all=true")) == 1
    refused = await admin_flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=grants[0]["client_id"]
    )
    assert refused.status_code == 400


async def test_keys_listed_and_rotated(admin_flow: Flow) -> None:
    before = await admin_get(admin_flow.client, "/keys")
    rotated = await admin_post(admin_flow.client, "/keys/rotate", {"alg": "ES256", "immediate": True})
    assert rotated["steps"] == ["ES256:create_next", "ES256:promote_next"]
    active = [k for k in rotated["keys"] if k["alg"] == "ES256" and k["state"] == "active"]
    assert len(active) == 1 and active[0]["kid"] not in {k["kid"] for k in before if k["state"] == "active"}
    bad = await admin_flow.client.post("/internal/admin/keys/rotate", json={"alg": "HS256"}, headers=ADMIN)
    assert bad.status_code == 400


async def test_unused_registered_clients_are_pruned(admin_flow: Flow, clock) -> None:
    unused = await admin_flow.register()
    used = await admin_flow.register()
    await admin_flow.tokens(used)
    integration = await admin_post(admin_flow.client, "/integrations", {"name": "P", "redirect_uris": [HTTPS_CALLBACK]})
    clock.advance(7 * 86400 + 60)
    await admin_flow.pool.execute("UPDATE authz_clients SET created_at = created_at - interval '8 days'")
    removed = await remove_unused_clients(admin_flow.client.app.state.authz.administration)
    assert removed == [unused["client_id"]]
    remaining = {c["client_id"] for c in await admin_get(admin_flow.client, "/clients")}
    assert remaining == {used["client_id"], integration["client_id"]}


async def test_admin_actions_are_audited_without_secrets(admin_flow: Flow) -> None:
    with structlog.testing.capture_logs() as events:
        await admin_post(admin_flow.client, "/schools", {"slug": "audit", "name": "Audit"})
        user = await admin_post(
            admin_flow.client, "/users", {"school": "audit", "email": "a@audit.test", "name": "A", "role": "student"}
        )
        integration = await admin_post(
            admin_flow.client, "/integrations", {"name": "P", "redirect_uris": [HTTPS_CALLBACK]}
        )
        await admin_post(admin_flow.client, f"/users/{user['id']}/disable")
    audited = [e for e in events if e.get("audit")]
    assert [e["event"] for e in audited] == ["school_created", "user_created", "integration_created", "user_disabled"]
    assert all(e["actor"] == "admin" for e in audited)
    for event in events:
        assert user["password"] not in repr(event) and integration["client_secret"] not in repr(event)


async def test_disabled_users_tokens_stop_working_at_the_api(open_api_env, authz_settings) -> None:
    async with open_api_env(authz_settings=with_admin(authz_settings), mode="jwt") as env:
        env: ApiEnv
        school = await env.school("acme")
        user = await env.flow.user("owner", school=school)
        tokens = await env.flow.tokens(await env.flow.register(), user, scope="courses:read")
        bearer = env.bearer(tokens["access_token"])
        assert (await env.api.get("/api/v1/courses", headers=bearer)).status_code == 200
        await admin_post(env.flow.client, f"/users/{user['id']}/disable")
        for _ in range(50):
            if (await env.api.get("/api/v1/courses", headers=bearer)).status_code == 401:
                break
            await asyncio.sleep(0.02)
        assert (await env.api.get("/api/v1/courses", headers=bearer)).status_code == 401


async def test_command_line_over_the_same_service(database_url, redis_url, kek, admin_flow: Flow) -> None:
    run = lambda *a: asyncio.to_thread(admin_cli, database_url, redis_url, kek, *a)  # noqa: E731
    made = await run("--json", "schools", "create", "--slug", "cli-school", "--name", "CLI School")
    assert made.returncode == 0, made.stderr
    assert msgspec.json.decode(made.stdout)["slug"] == "cli-school"
    user = await run(
        "--json", "users", "create", "--school", "cli-school", "--email", "c@cli.test", "--name", "C", "--role", "owner"
    )
    assert user.returncode == 0 and len(msgspec.json.decode(user.stdout)["password"]) >= 16
    integration = msgspec.json.decode(
        (await run("--json", "integrations", "create", "--name", "Partner", "--redirect-uri", HTTPS_CALLBACK)).stdout
    )
    assert integration["token_endpoint_auth_method"] == "client_secret_post"
    basic = await run(
        *("--json", "integrations", "create", "--name", "Partner API", "--redirect-uri", HTTPS_CALLBACK),
        *("--auth-method", "client_secret_basic"),
    )
    assert msgspec.json.decode(basic.stdout)["token_endpoint_auth_method"] == "client_secret_basic", basic.stderr
    # the integration made on the command line completes a flow with its https callback
    reg = {
        "client_id": integration["client_id"],
        "client_secret": integration["client_secret"],
        "redirect_uris": [HTTPS_CALLBACK],
    }
    owner = {"email": "c@cli.test", "password": msgspec.json.decode(user.stdout)["password"]}
    callback, verifier, _ = await admin_flow.authorize(reg, owner)
    assert (await admin_flow.exchange(reg, callback["code"], verifier)).status_code == 200
    text = await run("users", "list", "--school", "cli-school")
    assert "email=c@cli.test" in text.stdout and "role=owner" in text.stdout
    missing = await run("users", "disable", "nobody@cli.test")
    assert missing.returncode == 1 and "no user" in missing.stderr
    helped = await run("keys", "rotate", "--help")
    assert helped.returncode == 0 and "--immediate" in helped.stdout
    broken = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "courseschool.authz", "admin", "schools", "list"],
        env={k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "KEY_ENCRYPTION_KEY")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert broken.returncode == 2 and "configuration error" in broken.stderr


async def test_an_integration_made_on_the_command_line_refreshes_unless_told_not_to(
    database_url, redis_url, kek, admin_flow: Flow
) -> None:
    async def made(name: str, *extra: str) -> dict:
        done = await asyncio.to_thread(
            admin_cli,
            *(database_url, redis_url, kek, "--json", "integrations", "create"),
            *("--name", name, "--redirect-uri", HTTPS_CALLBACK, *extra),
        )
        assert done.returncode == 0, done.stderr
        return msgspec.json.decode(done.stdout)

    assert (await made("Partner"))["grant_types"] == ["authorization_code", "refresh_token"]
    assert (await made("Partner Batch", "--no-refresh"))["grant_types"] == ["authorization_code"]
