"""The kit without a browser on the machine (`login --no-browser`), and the sign-ins it
refuses or that have ended, against the running platform. The address printed is
approved in a browser context of its own (another computer); the address that browser
ended at (which does not load: nothing listens there) is pasted back. The sign-in is
kept in the file (no keyring here): mode 0600, and no token in the logs."""

from __future__ import annotations

import asyncio
import json
import re
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import Kit, approve
from .conftest import Platform, create_person

pytestmark = pytest.mark.browser
URL_LINE = re.compile(rb"^\s+(http\S+/oauth/authorize\?\S+)$", re.M)


@pytest.fixture
def person(database_url: str, redis_url: str, kek: str) -> tuple[str, str]:
    return create_person(database_url, redis_url, kek, name="Kit Lecturer", role="lecturer")


async def no_browser_login(
    kit: Kit, platform: Platform, browser: Any, person: tuple[str, str], *, button: str = "Allow", tamper: Any = None
) -> tuple[int, str]:
    """Run `login --no-browser`; approve its address in a fresh context; paste back the address."""
    login = await kit.start("login", platform.base_url, "--no-browser", "--scope", "openid email courses:read")
    assert login.stderr is not None and login.stdin is not None
    printed = b""
    while not (found := URL_LINE.search(printed)):
        chunk = await asyncio.wait_for(login.stderr.read(4096), 60)
        assert chunk, printed.decode()
        printed += chunk
    context = await browser.new_context()  # another computer: no cookies shared
    page = await context.new_page()
    landed: list[str] = []
    page.on("request", lambda r: landed.append(r.url) if "/callback?" in r.url else None)
    await approve(page, found.group(1).decode(), *person, button=button)
    for _ in range(100):
        if landed:
            break
        await asyncio.sleep(0.1)
    await context.close()
    assert landed and landed[0].startswith("http://127.0.0.1:"), landed
    pasted = tamper(landed[0]) if tamper else landed[0]
    out, err = await asyncio.wait_for(login.communicate(pasted.encode() + b"\n"), 60)
    return login.returncode or 0, printed.decode() + out.decode() + err.decode()


async def test_no_browser_login_signs_in_with_the_pasted_address(
    platform: Platform, browser: Any, person: tuple[str, str], tmp_path: Path
) -> None:
    kit = Kit(tmp_path / "home", keyring=False)
    code, said = await no_browser_login(kit, platform, browser, person)
    assert code == 0, said
    credentials = kit.home / "credentials.json"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert stat.S_IMODE(kit.home.stat().st_mode) == 0o700
    assert "no OS keyring" in said and str(credentials) in said, "the file is announced, never silent"
    record = json.loads(credentials.read_text())[platform.base_url]
    printed = kit.run("token", platform.base_url)
    async with httpx.AsyncClient(timeout=15.0) as http:
        read = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {printed.stdout.strip()}"}
        )
    assert read.status_code == 200, read.text
    for token in (record["access_token"], record["refresh_token"]):
        assert token not in said and token not in printed.stderr

    # A corrupted store: a clear sentence, no token printed; logout forgets it, login replaces it.
    credentials.write_text("{ not json")
    damaged = kit.run("token", platform.base_url)
    assert damaged.returncode == 1 and not damaged.stdout
    assert "damaged: run logout, then login" in damaged.stderr
    forgotten = kit.run("logout", platform.base_url)
    assert forgotten.returncode == 0 and "Forgotten" in forgotten.stderr, forgotten.stderr
    assert kit.run("token", platform.base_url).stderr.strip().endswith(f"login {platform.base_url})")


async def test_a_revoked_or_expired_sign_in_says_sign_in_again(
    platform: Platform, browser: Any, person: tuple[str, str], tmp_path: Path
) -> None:
    kit = Kit(tmp_path / "home", keyring=False)
    code, said = await no_browser_login(kit, platform, browser, person)
    assert code == 0, said
    credentials = kit.home / "credentials.json"
    everything = json.loads(credentials.read_text())
    record = everything[platform.base_url]
    async with httpx.AsyncClient(timeout=15.0) as http:  # the person ends it elsewhere (say, the apps page)
        ended = await http.post(
            f"{platform.base_url}/api/oauth/revoke",
            data={"token": record["refresh_token"], "client_id": record["client_id"]},
        )
    assert ended.status_code == 200
    record["expires_at"] = 0  # and the access token has expired
    credentials.write_text(json.dumps(everything))
    refused = kit.run("token", platform.base_url)
    assert refused.returncode == 1 and not refused.stdout
    assert "has ended (revoked or expired): sign in again" in refused.stderr
    after = json.loads(credentials.read_text())[platform.base_url]
    assert after["refresh_token"] == "" and after["client_id"] == record["client_id"], "registration kept"


@pytest.mark.parametrize(
    ("button", "tamper", "said"),
    [
        ("Deny", None, "the sign-in was refused: access_denied"),
        ("Allow", lambda url: re.sub(r"state=[^&]+", "state=forged", url), "state does not match"),
        ("Allow", lambda url: re.sub(r"iss=[^&]+", "iss=http%3A%2F%2Fevil.example", url), "does not come from"),
    ],
    ids=["error-redirect", "wrong-state", "wrong-iss"],
)
async def test_an_answer_not_for_this_sign_in_is_refused(
    platform: Platform, browser: Any, person: tuple[str, str], tmp_path: Path, button: str, tamper: Any, said: str
) -> None:
    kit = Kit(tmp_path / "home", keyring=False)
    code, output = await no_browser_login(kit, platform, browser, person, button=button, tamper=tamper)
    assert code == 1, output
    assert said in output
    stored = kit.home / "credentials.json"
    assert not stored.exists() or not json.loads(stored.read_text()).get(platform.base_url, {}).get("refresh_token")
