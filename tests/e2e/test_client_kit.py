"""The developer's kit (libs/client, issue 42) against the running platform, in real
Chromium: `login` opens the browser (Python's webbrowser, pointed by `BROWSER` at a
script that hands the address to the test, which drives Chromium there), the person
approves, `status` shows the grant, `token` prints a token that reads the API, a
`403 insufficient_scope` makes the library step up (the test approves, in the same
browser: the new grant replaces the old), `logout` revokes (the API answers 401 with the
old token). Every CLI run is verbose, and none of its output holds a token."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import keyring
import pytest

from ..client.keyring_backend import FileBackedKeyring
from ..client.kit import Kit, Person, approve
from .conftest import Platform, create_person

pytestmark = pytest.mark.browser
READS = "openid profile email courses:read"


@pytest.fixture
def person(database_url: str, redis_url: str, kek: str) -> tuple[str, str]:
    return create_person(database_url, redis_url, kek, name="Kit Admin", role="admin")


def stored_record(kit: Kit, base_url: str) -> dict[str, Any]:
    entries = json.loads(kit.keyring_file.read_text())
    return dict(json.loads(entries[f"courseschool-client {base_url}"]))


async def api_status(base_url: str, token: str, path: str = "/api/v1/courses") -> int:
    async with httpx.AsyncClient(timeout=15.0) as http:
        response = await http.get(f"{base_url}{path}", headers={"Authorization": f"Bearer {token}"})
    return response.status_code


async def test_login_status_token_step_up_logout(
    platform: Platform, browser: Any, person: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    email, password = person
    kit = Kit(tmp_path / "home")
    base = platform.base_url
    context = await browser.new_context()
    page = await context.new_page()
    logs: list[str] = []

    # login: the program opens the browser; the person signs in and approves there.
    login = await kit.start("login", base, "--scope", READS)
    url = await kit.next_opened()
    assert url.startswith(f"{base}/oauth/authorize?") and "code_challenge_method=S256" in url
    await approve(page, url, email, password)
    from playwright.async_api import expect

    await expect(page.get_by_text("is signed in. You can close this window.")).to_be_visible()
    out, err = await asyncio.wait_for(login.communicate(), 60)
    logs.append(out.decode() + err.decode())
    assert login.returncode == 0, logs[-1]
    assert "Signed in to" in logs[-1] and "FileBackedKeyring" in logs[-1]
    assert not (kit.home / "credentials.json").exists(), "a keyring exists: no file is written"
    first = stored_record(kit, base)
    assert set(first["scope"].split()) == set(READS.split())

    # status: who, which school, which scopes, until when.
    status = kit.run("status", base)
    logs.append(status.stdout + status.stderr)
    assert status.returncode == 0, status.stderr
    assert email in status.stdout and "courses:read" in status.stdout and "expires" in status.stdout
    assert "school" in status.stdout and "(not in the token)" not in status.stdout

    # token: a fresh access token for the shell, which reads the API.
    printed = kit.run("token", base)
    logs.append(printed.stderr)
    assert printed.returncode == 0, printed.stderr
    access = printed.stdout.strip()
    assert await api_status(base, access) == 200

    # step-up: this process uses the stored sign-in; orders need orders:read, not granted.
    monkeypatch.setenv("TEST_KEYRING_FILE", str(kit.keyring_file))
    previous_backend = keyring.get_keyring()
    keyring.set_keyring(FileBackedKeyring())
    opener = Person(page, email, password)  # the browser opener the library takes

    try:
        from courseschool_client import CourseSchool

        session = CourseSchool.stored(base, folder=kit.home, open_browser=opener)
        session.interaction.say = logs.append

        def read_orders() -> httpx.Response:
            with httpx.Client(auth=session, timeout=30.0) as api:
                return api.get(f"{base}/api/v1/orders")

        orders = await asyncio.to_thread(read_orders)
    finally:
        keyring.set_keyring(previous_backend)
    assert orders.status_code == 200, orders.text
    assert len(opener.asked) == 1, opener.asked
    asked_scope = set(dict(httpx.URL(opener.asked[0]).params)["scope"].split())
    assert asked_scope == {*READS.split(), "orders:read"}, "the step-up asks for the union"
    stepped = stored_record(kit, base)
    assert "orders:read" in stepped["scope"].split()
    async with httpx.AsyncClient(timeout=15.0) as http:
        old = await http.post(
            f"{base}/api/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": first["refresh_token"],
                "client_id": first["client_id"],
            },
        )
    assert old.status_code == 400 and old.json()["error"] == "invalid_grant", old.text
    assert await api_status(base, stepped["access_token"], "/api/v1/orders") == 200

    # logout: revoked and forgotten; the API refuses the last token.
    logout = kit.run("logout", base)
    logs.append(logout.stderr)
    assert logout.returncode == 0, logout.stderr
    for _ in range(50):  # revocation reaches the API within a moment
        if await api_status(base, stepped["access_token"]) == 401:
            break
        await asyncio.sleep(0.1)
    assert await api_status(base, stepped["access_token"]) == 401
    again = kit.run("token", base)
    assert again.returncode == 1 and "sign in again" in again.stderr and not again.stdout
    logs.append(again.stderr)

    for token in (first["access_token"], first["refresh_token"], stepped["access_token"], stepped["refresh_token"]):
        assert all(token not in log for log in logs), "a token appeared in the logs"
    await context.close()
