"""The connected-apps page in a real browser (headless Chromium, JavaScript off: forms
and buttons only), against the running platform: a person approves two apps, removes
one from the page with the keyboard; that app's refresh token fails and its access
token is refused by the resource API within a second; the other app keeps working."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from .conftest import CallbackServer, Platform, create_person
from .support import authorization_request, discover, exchange_code, register

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
    code = (await asyncio.to_thread(callback_server.wait, TIMEOUT_MS / 1000))["code"]
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
        button = row.get_by_role("button", name="Remove access")
        await button.focus()
        await page.keyboard.press("Enter")  # keyboard only, no script
        await expect(page.get_by_role("status")).to_contain_text("Access removed")
        await expect(rows).to_have_count(1)
        await expect(rows.first.get_by_role("heading")).to_have_text("E2E Grade Export")

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
