"""The admin command line prints its result and nothing else: the audit record of each
action goes to the store (`audit list`) and to its log file (ADMIN_LOG_FILE, else
admin-cli.log in the user's state folder), never to the terminal; `-` sends the log to
standard error, and a log file that cannot be written leaves the records there, said
once. Revoking a grant that has already ended says so, exits 0 and records nothing."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import msgspec

from .admin_api import admin_cli
from .flow import Flow


def _records(path: Path) -> list[dict[str, Any]]:
    return [msgspec.json.decode(line) for line in path.read_text().splitlines()]


async def test_the_cli_prints_its_result_and_logs_to_a_file(database_url, redis_url, kek, flow: Flow, tmp_path) -> None:
    log = tmp_path / "admin.log"
    env = {"ADMIN_LOG_FILE": str(log)}
    made = await asyncio.to_thread(
        admin_cli,
        database_url,
        redis_url,
        kek,
        "--json",
        "schools",
        "create",
        "--slug",
        "quiet",
        "--name",
        "Quiet",
        env=env,
    )
    assert made.returncode == 0 and made.stderr == "", made.stderr
    school = msgspec.json.decode(made.stdout)  # the result, all of stdout
    assert school["slug"] == "quiet"
    (record,) = _records(log)
    assert record["event"] == "school_created" and record["actor"] == "admin-cli" and record["audit"] is True
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    kept = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, "--json", "audit", "list", env=env)
    assert [a["action"] for a in msgspec.json.decode(kept.stdout)] == ["school_created"]  # and in the store
    assert kept.stderr == "" and len(_records(log)) == 1  # reading the record is no action


async def test_the_log_file_defaults_to_the_state_folder(database_url, redis_url, kek, flow: Flow, tmp_path) -> None:
    env: dict[str, str | None] = {"ADMIN_LOG_FILE": None, "XDG_STATE_HOME": str(tmp_path / "state")}
    made = await asyncio.to_thread(
        admin_cli, database_url, redis_url, kek, "schools", "create", "--slug", "s", "--name", "S", env=env
    )
    assert made.returncode == 0 and made.stderr == "", made.stderr
    assert "slug: s" in made.stdout
    log = tmp_path / "state" / "courseschool" / "admin-cli.log"
    assert [r["event"] for r in _records(log)] == ["school_created"]
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


async def test_the_log_goes_to_standard_error_when_asked_or_when_no_file_can_be_written(
    database_url, redis_url, kek, flow: Flow, tmp_path
) -> None:
    asked = await asyncio.to_thread(
        admin_cli,
        database_url,
        redis_url,
        kek,
        "schools",
        "create",
        "--slug",
        "a",
        "--name",
        "A",
        env={"ADMIN_LOG_FILE": "-"},
    )
    assert asked.returncode == 0
    assert [msgspec.json.decode(line)["event"] for line in asked.stderr.splitlines()] == ["school_created"]
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env = {"ADMIN_LOG_FILE": str(blocked / "admin.log")}  # below a file: cannot be made
    fallback = await asyncio.to_thread(
        admin_cli, database_url, redis_url, kek, "schools", "create", "--slug", "b", "--name", "B", env=env
    )
    assert fallback.returncode == 0 and "slug: b" in fallback.stdout
    said, record = fallback.stderr.splitlines()
    assert said.startswith(f"log: cannot write {blocked / 'admin.log'}") and "ADMIN_LOG_FILE" in said
    assert msgspec.json.decode(record)["event"] == "school_created"  # the record is never dropped


async def test_revoking_an_ended_grant_says_so_and_records_nothing(
    database_url, redis_url, kek, flow: Flow, tmp_path
) -> None:
    await flow.tokens()
    # The sign-in's own events are written by this process's recorder in batches: written
    # now, so that none of them lands between the counts below (seen once under load).
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    (grant_id,) = [str(r["id"]) for r in await flow.pool.fetch("SELECT id FROM authz_grants")]
    log = tmp_path / "admin.log"
    run = lambda *a: asyncio.to_thread(  # noqa: E731
        admin_cli, database_url, redis_url, kek, *a, env={"ADMIN_LOG_FILE": str(log)}
    )
    first = await run("--json", "grants", "revoke", grant_id)
    assert first.returncode == 0 and msgspec.json.decode(first.stdout) == {"id": grant_id, "revoked": True}
    events = [r["event"] for r in _records(log)]
    assert events == ["grant_revoked", "grant_revoked_by_admin"]
    actions = await flow.count("authz_events")
    revoked_at = await flow.pool.fetchval("SELECT revoked_at FROM authz_grants WHERE id = $1::uuid", grant_id)

    again = await run("--json", "grants", "revoke", grant_id)
    assert again.returncode == 0 and again.stderr == ""
    assert msgspec.json.decode(again.stdout) == {"id": grant_id, "revoked": False, "already_ended": True}
    as_text = await run("grants", "revoke", grant_id)
    assert as_text.returncode == 0 and "already_ended: True" in as_text.stdout and "revoked: False" in as_text.stdout
    assert [r["event"] for r in _records(log)] == events  # nothing new in the log,
    assert await flow.count("authz_events") == actions  # nor in the store,
    assert await flow.pool.fetchval("SELECT revoked_at FROM authz_grants WHERE id = $1::uuid", grant_id) == revoked_at

    unknown = await run("grants", "revoke", "00000000-0000-4000-8000-000000000000")
    assert unknown.returncode == 1 and "no grant" in unknown.stderr
    assert await flow.count("authz_events") == actions
