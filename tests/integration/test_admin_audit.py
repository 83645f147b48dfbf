"""Administration is auditable: every action of the admin API and of the CLI is kept
with who took it, from where and on whom, and read back with filters; the CLI takes a
password on standard input, shows times in ISO 8601, says when a rotated key signs, and
lists grants with their app and last use."""

from __future__ import annotations

import asyncio
from datetime import datetime

import msgspec
import pytest

from .admin_api import ADMIN, admin_cli, admin_get, admin_post
from .flow import Flow


async def test_api_actions_are_kept_with_actor_source_and_target_and_filtered(admin_flow: Flow) -> None:
    school = await admin_post(admin_flow.client, "/schools", {"slug": "audited", "name": "Audited"})
    user = await admin_post(
        admin_flow.client, "/users", {"school": "audited", "email": "a@audit.test", "name": "A", "role": "owner"}
    )
    await admin_post(admin_flow.client, f"/users/{user['id']}/role", {"role": "lecturer"})
    actions = await admin_get(admin_flow.client, "/audit")
    assert [a["action"] for a in actions][:3] == ["user_role_set", "user_created", "school_created"]
    role_set = actions[0]
    assert role_set["actor"] == "admin" and role_set["source"]  # the caller's address
    assert role_set["subject"] == user["id"]
    assert role_set["details"] == {"role": "lecturer", "previous_role": "owner", "grants_ended": 0}
    assert datetime.fromisoformat(role_set["at"]).tzinfo is not None
    by_email = await admin_get(admin_flow.client, "/audit?user=a@audit.test")
    assert {a["action"] for a in by_email} == {"user_role_set", "user_created"}
    assert [a["subject"] for a in await admin_get(admin_flow.client, "/audit?action=school_created")] == [school["id"]]
    assert await admin_get(admin_flow.client, "/audit?since=2999-01-01") == []
    assert "password" not in msgspec.json.encode(actions).decode()


async def test_refused_audit_queries_say_why(admin_flow: Flow) -> None:
    for query, status in (("since=yesterday", 400), ("limit=0", 400), ("limit=x", 400), ("user=nobody@x.test", 404)):
        response = await admin_flow.client.get(f"/internal/admin/audit?{query}", headers=ADMIN)
        assert response.status_code == status, (query, response.text)


@pytest.mark.parametrize("name", ["kind", "user", "client", "school", "action", "since", "until"])
@pytest.mark.parametrize("character", ["%00", "%1B", "%0A", "%E2%80%AE"])
async def test_every_audit_filter_refuses_control_characters(admin_flow: Flow, name: str, character: str) -> None:
    """Issue 38, T4-5: `?client=%00` was a 500 with a traceback (PostgreSQL refuses a NUL
    in text). Every filter refuses a control or other hidden character with a 400."""
    response = await admin_flow.client.get(f"/internal/admin/audit?{name}=a{character}b", headers=ADMIN)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "invalid_request"
    assert body["error_description"] == f"{name} must not contain control characters"
    assert "Traceback" not in response.text


async def test_cli_actions_are_audit_events_with_their_source(database_url, redis_url, kek, admin_flow: Flow) -> None:
    run = lambda *a, stdin=None: asyncio.to_thread(admin_cli, database_url, redis_url, kek, *a, stdin=stdin)  # noqa: E731
    assert (await run("schools", "create", "--slug", "cli-audit", "--name", "CLI Audit")).returncode == 0
    password = "a long password from stdin 42"
    made = await run(
        "--json",
        "users",
        "create",
        "--school",
        "cli-audit",
        "--email",
        "p@cli.test",
        "--name",
        "P",
        "--role",
        "owner",
        "--password-stdin",
        stdin=password + "\n",
    )
    assert made.returncode == 0, made.stderr
    assert "password" not in msgspec.json.decode(made.stdout)  # chosen, so not printed
    # the password from stdin is the one that signs in
    reg = await admin_flow.register()
    callback, verifier, _ = await admin_flow.authorize(reg, {"email": "p@cli.test", "password": password})
    assert (await admin_flow.exchange(reg, callback["code"], verifier)).status_code == 200
    empty = await run("users", "reset-password", "p@cli.test", "--password-stdin", stdin="")
    assert empty.returncode == 1 and "--password-stdin" in empty.stderr
    listed = msgspec.json.decode(
        (await run("--json", "audit", "list", "--kind", "admin", "--user", "p@cli.test")).stdout
    )
    assert [a["action"] for a in listed] == ["user_created"]
    everything = msgspec.json.decode((await run("--json", "audit", "list", "--user", "p@cli.test")).stdout)
    assert [a["action"] for a in everything] == ["consent_given", "login_succeeded", "user_created"]
    assert listed[0]["actor"] == "admin-cli" and "@" in listed[0]["source"]
    grants = msgspec.json.decode((await run("--json", "grants", "list", "--user", "p@cli.test")).stdout)
    assert grants[0]["client_name"] == "Test CLI" and datetime.fromisoformat(grants[0]["last_used_at"])


async def test_keys_show_iso_times_and_a_rotation_says_when_the_next_key_signs(
    database_url, redis_url, kek, admin_flow: Flow
) -> None:
    rotated = await asyncio.to_thread(
        admin_cli, database_url, redis_url, kek, "--json", "keys", "rotate", "--alg", "RS256"
    )
    assert rotated.returncode == 0, rotated.stderr
    body = msgspec.json.decode(rotated.stdout)
    upcoming = next(k for k in body["keys"] if k["alg"] == "RS256" and k["state"] == "next")
    signs_from = datetime.fromisoformat(body["next_key_signs_from"])
    assert signs_from > datetime.fromisoformat(upcoming["created_at"])
    text = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, "keys", "list")
    assert "created_at=20" in text.stdout and "T" in text.stdout.split("created_at=")[1][:12]
