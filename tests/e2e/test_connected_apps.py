"""The connected-apps page in a real browser (headless Chromium), against the running
platform. A person approves two apps and removes one with the keyboard, JavaScript off:
that app's refresh token fails and its access token is refused by the resource API
within a second; the other app keeps working. One grant per sign-in (issue 24): two
browser contexts stand for two computers signing in to one client id (a Client ID
Metadata Document client, then an administrator's integration); both keep refreshing
and reading the API, the page lists two sign-ins under one app, and ending one from the
page leaves the other working."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..support.dpop_proofs import DpopKey
from ..support.oauth_client import authorization_request, discover, exchange_code, register
from ..support.tls import HttpsServer, Reply, https_server
from .conftest import CallbackServer, Platform, admin_cli, create_person, running_platform

pytestmark = pytest.mark.browser

TIMEOUT_MS = 15_000
REFUSED_WITHIN = 1.0  # seconds: the promise for a removal to reach the resource API


@pytest.fixture
async def context(browser: Any) -> AsyncIterator[Any]:
    ctx = await browser.new_context(java_script_enabled=False)
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        await ctx.close()


async def _approve(
    page: Any, meta: dict, reg: dict, callback_server: CallbackServer, http: httpx.AsyncClient, person: tuple[str, str]
) -> dict[str, Any]:
    """Authorize the app in the browser (signing in when asked), exchange its code."""
    from playwright.async_api import expect

    request = authorization_request(meta, reg, callback_server.url)
    await page.goto(request["url"])
    allow = page.get_by_role("button", name="Allow")
    if await page.get_by_role("heading", name="Sign in").is_visible():
        await page.get_by_label("Email").fill(person[0])
        await page.get_by_label("Password").fill(person[1])
        await page.get_by_role("button", name="Sign in").press("Enter")
    await expect(allow).to_be_visible()
    await allow.click()
    code = (await callback_server.wait(TIMEOUT_MS / 1000))["code"]
    response = await exchange_code(http, meta, reg, request, code)
    assert response.status_code == 200, response.text
    return response.json()


async def _courses(http: httpx.AsyncClient, platform: Platform, access_token: str) -> int:
    answer = await http.get(f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {access_token}"})
    return answer.status_code


async def _refresh(http: httpx.AsyncClient, meta: dict, reg: dict, refresh_token: str) -> httpx.Response:
    return await http.post(
        meta["token_endpoint"],
        data={"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": reg["client_id"]},
    )


async def test_removing_one_app_ends_its_access_at_once_and_keeps_the_other(
    platform: Platform,
    callback_server: CallbackServer,
    context: Any,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    person = create_person(database_url, redis_url, kek, name="Robin Removes", role="owner")
    page = await context.new_page()
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        gone_app = await register(http, meta, callback_server.url, client_name="E2E Notes Sync")
        kept_app = await register(http, meta, callback_server.url, client_name="E2E Grade Export")
        gone = await _approve(page, meta, gone_app, callback_server, http, person)
        kept = await _approve(page, meta, kept_app, callback_server, http, person)
        assert await _courses(http, platform, gone["access_token"]) == 200
        assert await _courses(http, platform, kept["access_token"]) == 200

        await page.goto(f"{platform.base_url}/oauth/apps")
        await expect(page.get_by_role("heading", name="Your connected apps")).to_be_visible()
        rows = page.locator("li.app")
        await expect(rows).to_have_count(2)
        row = rows.filter(has=page.get_by_role("heading", name="E2E Notes Sync"))
        await expect(row).to_contain_text("Self-declared name")
        await expect(row).to_contain_text("Courses")
        await row.get_by_role("link", name="Remove the app everywhere").focus()
        await page.keyboard.press("Enter")  # keyboard only, no script
        await expect(page.get_by_role("heading", name="Remove E2E Notes Sync everywhere?")).to_be_visible()
        await page.get_by_role("button", name="Remove the app everywhere").focus()
        await page.keyboard.press("Enter")
        await expect(page.get_by_role("status")).to_contain_text("Removed E2E Notes Sync everywhere")
        await expect(rows).to_have_count(1)
        await expect(rows.first.get_by_role("heading", level=2)).to_have_text("E2E Grade Export")

        refused = await _refresh(http, meta, gone_app, gone["refresh_token"])
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        deadline = time.monotonic() + REFUSED_WITHIN
        status = await _courses(http, platform, gone["access_token"])
        while status != 401 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            status = await _courses(http, platform, gone["access_token"])
        assert status == 401, f"the removed app's access token still answered {status} after {REFUSED_WITHIN} s"

        assert await _courses(http, platform, kept["access_token"]) == 200
        refreshed = await _refresh(http, meta, kept_app, kept["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text
        assert await _courses(http, platform, refreshed.json()["access_token"]) == 200
    callback_server.assert_idle()


# -- one grant per sign-in: two computers, one client id ------------------------------------------

FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Safari/605.1.15"
)


@pytest.fixture(scope="module")
def document_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpsServer, Path]]:
    """A local HTTPS site with its own test CA, where an agent publishes its Client ID
    Metadata Document (standing in for the web)."""
    with https_server(tmp_path_factory.mktemp("document-site")) as running:
        yield running


@pytest.fixture(scope="module")
def cimd_platform(
    platform: Platform,
    document_site: tuple[HttpsServer, Path],
    database_url: str,
    redis_url: str,
    kek: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Platform]:
    """The all-in-one app fetching metadata documents from the test site (its CA
    trusted, its loopback address reachable), which no setting allows: built by
    tests/support/platform_with_site.py; it shares the session's database."""
    _, ca = document_site
    with running_platform(
        database_url,
        redis_url,
        kek,
        tmp_path_factory.mktemp("cimd-platform-data"),
        command=("tests.support.platform_with_site", "--ca", str(ca)),
    ) as running:
        yield running


@pytest.fixture
async def two_computers(browser: Any) -> AsyncIterator[tuple[Any, Any]]:
    """Two browser contexts (their own cookies) standing for a Linux laptop and a Mac, with
    script on and a time zone that is not UTC."""
    laptop = await browser.new_context(user_agent=FIREFOX_LINUX, timezone_id="Europe/Berlin")
    mac = await browser.new_context(user_agent=SAFARI_MAC, timezone_id="America/New_York")
    for ctx in (laptop, mac):
        ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield laptop, mac
    finally:
        await laptop.close()
        await mac.close()


async def _sign_in_on(
    ctx: Any, meta: dict, reg: dict, callback_server: CallbackServer, http: httpx.AsyncClient, person: tuple[str, str]
) -> dict[str, Any]:
    """One computer signs in to the app: the browser approves (or the integration's
    remembered consent does), the app exchanges the code (with its secret, if it has one)."""
    from playwright.async_api import expect

    page = await ctx.new_page()
    request = authorization_request(meta, reg, callback_server.url)
    await page.goto(request["url"])
    if await page.get_by_role("heading", name="Sign in").is_visible():
        await page.get_by_label("Email").fill(person[0])
        await page.get_by_label("Password").fill(person[1])
        await page.get_by_role("button", name="Sign in").click()
    allow = page.get_by_role("button", name="Allow")
    closed = page.get_by_text("You can close this window")
    await expect(allow.or_(closed)).to_be_visible()
    if await allow.is_visible():
        await asyncio.wait_for(allow.click(), 2 * TIMEOUT_MS / 1000)
    code = (await callback_server.wait(TIMEOUT_MS / 1000))["code"]
    # The page is closed only once the app's page has loaded in it: a page closed while
    # that navigation was still under way never finished closing (Playwright's close has
    # no time-out of its own), which stopped whole runs (#37). A loop timer bounds it anyway.
    await expect(closed).to_be_visible()
    await asyncio.wait_for(page.close(), 2 * TIMEOUT_MS / 1000)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request["redirect_uri"],
        "client_id": reg["client_id"],
        "code_verifier": request["verifier"],
    }
    if "client_secret" in reg:
        form["client_secret"] = reg["client_secret"]
    response = await http.post(meta["token_endpoint"], data=form)
    assert response.status_code == 200, response.text
    return response.json()


async def _refresh_and_read(
    http: httpx.AsyncClient, platform: Platform, meta: dict, reg: dict, tokens: dict[str, Any]
) -> dict[str, Any]:
    """Refresh (the token rotates) and read the API with the new access token."""
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": reg["client_id"]}
    if "client_secret" in reg:
        form["client_secret"] = reg["client_secret"]
    refreshed = await http.post(meta["token_endpoint"], data=form)
    assert refreshed.status_code == 200, refreshed.text
    fresh = refreshed.json()
    assert await _courses(http, platform, fresh["access_token"]) == 200
    return fresh


async def _two_sign_ins_of_one_app(
    platform: Platform,
    callback_server: CallbackServer,
    two_computers: tuple[Any, Any],
    person: tuple[str, str],
    reg: dict[str, Any],
    name: str,
) -> None:
    from playwright.async_api import expect

    laptop_ctx, mac_ctx = two_computers
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        laptop = await _sign_in_on(laptop_ctx, meta, reg, callback_server, http, person)
        mac = await _sign_in_on(mac_ctx, meta, reg, callback_server, http, person)
        # Signing in on the Mac kept the laptop signed in: both refresh and read, twice over.
        for _ in range(2):
            laptop = await _refresh_and_read(http, platform, meta, reg, laptop)
            mac = await _refresh_and_read(http, platform, meta, reg, mac)

        page = await laptop_ctx.new_page()
        await page.goto(f"{platform.base_url}/oauth/apps")
        card = page.locator("li.app").filter(has=page.get_by_role("heading", name=name, exact=True))
        await expect(card).to_have_count(1)
        sign_ins = card.locator("li.sign-in")
        await expect(sign_ins).to_have_count(2)
        mac_row = sign_ins.filter(has=page.get_by_role("heading", name="Safari on macOS"))
        laptop_row = sign_ins.filter(has=page.get_by_role("heading", name="Firefox on Linux"))
        for row in (mac_row, laptop_row):
            await expect(row.locator("dt", has_text="From address").locator("xpath=..")).to_contain_text("127.0.0.1")
            await expect(row.locator("time").first).not_to_contain_text("UTC")  # shown in Berlin time
        await expect(page.locator("#time-zone-note")).to_contain_text("Europe/Berlin")

        await mac_row.get_by_role("link", name="End this sign-in").click()
        await expect(page.get_by_role("heading", name=f"End the sign-in of {name} in Safari on macOS?")).to_be_visible()
        await page.get_by_role("button", name="End this sign-in").click()
        await expect(page.get_by_role("status")).to_contain_text(f"Signed out of {name} in Safari on macOS")
        await expect(sign_ins).to_have_count(1)
        await expect(sign_ins.first).to_contain_text("Firefox on Linux")
        await page.close()

        form = {"grant_type": "refresh_token", "refresh_token": mac["refresh_token"], "client_id": reg["client_id"]}
        if "client_secret" in reg:
            form["client_secret"] = reg["client_secret"]
        refused = await http.post(meta["token_endpoint"], data=form)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        deadline = time.monotonic() + REFUSED_WITHIN
        status = await _courses(http, platform, mac["access_token"])
        while status != 401 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            status = await _courses(http, platform, mac["access_token"])
        assert status == 401, f"the ended sign-in's access token still answered {status}"
        await _refresh_and_read(http, platform, meta, reg, laptop)  # the laptop is still signed in
    callback_server.assert_idle()


async def test_two_computers_sign_in_to_one_metadata_document_client(
    cimd_platform: Platform,
    document_site: tuple[HttpsServer, Path],
    callback_server: CallbackServer,
    two_computers: tuple[Any, Any],
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """An agent known by its Client ID Metadata Document: one URL for every copy of it."""
    server, _ = document_site
    path = f"/agents/{secrets.token_hex(4)}/client.json"
    client_id = server.url(path)
    document = {
        "client_id": client_id,
        "client_name": "E2E Desk Agent",
        "redirect_uris": [callback_server.url],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
    }
    server.replies[path] = Reply(
        json.dumps(document).encode(), headers={"Content-Type": "application/json", "Cache-Control": "max-age=600"}
    )
    person = create_person(database_url, redis_url, kek, name="Dana Two Desks", role="owner")
    reg = {"client_id": client_id, "redirect_uris": [callback_server.url]}
    await _two_sign_ins_of_one_app(cimd_platform, callback_server, two_computers, person, reg, "E2E Desk Agent")


async def test_two_computers_sign_in_to_one_integration(
    platform: Platform,
    callback_server: CallbackServer,
    two_computers: tuple[Any, Any],
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """A web app an administrator made, whose users sign in from several browsers."""
    name = f"E2E Staff Portal {secrets.token_hex(2)}"
    made = admin_cli(
        database_url,
        redis_url,
        kek,
        *("--json", "integrations", "create", "--name", name, "--redirect-uri", callback_server.url),
    )
    integration = json.loads(made)
    person = create_person(database_url, redis_url, kek, name="Ira Integrated", role="owner")
    await _two_sign_ins_of_one_app(platform, callback_server, two_computers, person, integration, name)


async def _computer_signs_in(
    browser: Any,
    meta: dict,
    reg: dict,
    callback_server: CallbackServer,
    http: httpx.AsyncClient,
    person: tuple[str, str],
    *,
    scope: str = "openid courses:read",
    key: DpopKey | None = None,
) -> dict[str, Any]:
    """A new computer (a browser context of its own) signs in to the app and approves; the
    app exchanges the code, with a DPoP proof of `key` when given (RFC 9449 §5)."""
    from playwright.async_api import expect

    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        page = await ctx.new_page()
        request = authorization_request(meta, reg, callback_server.url, scope=scope)
        await page.goto(request["url"])
        await page.get_by_label("Email").fill(person[0])
        await page.get_by_label("Password").fill(person[1])
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("button", name="Allow")).to_be_visible()
        await page.get_by_role("button", name="Allow").click()
        code = (await callback_server.wait(TIMEOUT_MS / 1000))["code"]
        await expect(page.get_by_text("You can close this window")).to_be_visible()  # closed once loaded
    finally:
        await ctx.close()
    headers = {"DPoP": key.proof("POST", meta["token_endpoint"])} if key is not None else {}
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request["redirect_uri"],
        "client_id": reg["client_id"],
        "code_verifier": request["verifier"],
    }
    response = await http.post(meta["token_endpoint"], data=form, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def _refreshes(
    http: httpx.AsyncClient, meta: dict, reg: dict, tokens: dict[str, Any], key: DpopKey | None = None
) -> bool:
    headers = {"DPoP": key.proof("POST", meta["token_endpoint"])} if key is not None else {}
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": reg["client_id"]}
    answer = await http.post(meta["token_endpoint"], data=form, headers=headers)
    assert answer.status_code in (200, 400), answer.text
    return answer.status_code == 200


async def test_an_eleventh_computer_ends_the_least_recently_used_sign_in(
    platform: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    """GRANTS_PER_APP (10): eleven computers sign in to one app; the one used least
    recently is signed out, the other ten keep working, and the page lists ten."""
    from playwright.async_api import expect

    person = create_person(database_url, redis_url, kek, name="Eleven Desks", role="owner")
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url, client_name="E2E Many Desks")
        computers = [await _computer_signs_in(browser, meta, reg, callback_server, http, person) for _ in range(10)]
        # Every computer but the first uses the app again: the first is the least recently used.
        for n in range(1, 10):
            form = {"grant_type": "refresh_token", "refresh_token": computers[n]["refresh_token"]}
            refreshed = await http.post(meta["token_endpoint"], data={**form, "client_id": reg["client_id"]})
            assert refreshed.status_code == 200, refreshed.text
            computers[n] = refreshed.json()
        eleventh = await _computer_signs_in(browser, meta, reg, callback_server, http, person)
        assert not await _refreshes(http, meta, reg, computers[0])  # superseded
        for tokens in [*computers[1:], eleventh]:
            assert await _refreshes(http, meta, reg, tokens)
    ctx = await browser.new_context()
    try:
        page = await ctx.new_page()
        await page.goto(f"{platform.base_url}/oauth/apps")
        await page.get_by_label("Email").fill(person[0])
        await page.get_by_label("Password").fill(person[1])
        await page.get_by_role("button", name="Sign in").click()
        card = page.locator("li.app").filter(has=page.get_by_role("heading", name="E2E Many Desks", exact=True))
        await expect(card.locator("li.sign-in")).to_have_count(10)
    finally:
        await ctx.close()
    callback_server.assert_idle()


async def test_a_dpop_bound_step_up_replaces_only_the_sign_in_with_the_same_key(
    platform: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    """Two computers, each with its own DPoP key, sign in to one app; the first asks again
    for more (a step-up) with the same key: only its earlier sign-in is replaced."""
    person = create_person(database_url, redis_url, kek, name="Kay Keys", role="owner")
    laptop_key, desktop_key = DpopKey(), DpopKey()
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url, client_name="E2E Keyed Agent")
        laptop = await _computer_signs_in(browser, meta, reg, callback_server, http, person, key=laptop_key)
        desktop = await _computer_signs_in(browser, meta, reg, callback_server, http, person, key=desktop_key)
        assert laptop["token_type"] == desktop["token_type"] == "DPoP"
        more = "openid courses:read courses:write"
        stepped = await _computer_signs_in(
            browser, meta, reg, callback_server, http, person, scope=more, key=laptop_key
        )
        assert set(stepped["scope"].split()) == set(more.split())
        assert not await _refreshes(http, meta, reg, laptop, laptop_key)  # replaced: the same install
        assert await _refreshes(http, meta, reg, desktop, desktop_key)  # the other computer stays
        assert await _refreshes(http, meta, reg, stepped, laptop_key)
    callback_server.assert_idle()
