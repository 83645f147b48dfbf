"""Consent the person trims, in real Chromium: an agent asks for every scope the metadata
lists (as an MCP client does); the page says in one line that it asks to change almost
everything in the school, by the school's name; the person unticks two areas (one whole,
one's change part) with the keyboard and allows. The token's `scope` lacks exactly those
(RFC 6749 §3.3) and the API refuses them with 403 and the scope in the challenge.
The page is photographed in both themes at both widths for a person to look at."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..support.oauth_client import authorization_request, discover, exchange_code, register
from .conftest import CallbackServer, Platform

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
TIMEOUT_MS = 15_000


@pytest.fixture
async def context(browser: Any) -> AsyncIterator[Any]:
    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        await ctx.close()


async def _photograph(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        for theme in ("light", "dark"):
            await page.emulate_media(color_scheme=theme)
            await page.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}-{width}.png"), full_page=True)
    await page.emulate_media(color_scheme="light")
    await page.set_viewport_size({"width": 1280, "height": 800})


async def test_unticked_areas_are_left_out_of_the_token_and_refused_by_the_api(
    platform: Platform, callback_server: CallbackServer, context: Any
) -> None:
    from playwright.async_api import expect

    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url, client_name="Every Scope Agent")
    every = meta["scopes_supported"]
    request = authorization_request(meta, reg, callback_server.url, scope=" ".join(every))
    page = await context.new_page()
    await page.goto(request["url"])
    await page.get_by_label("Email").fill(platform.email)
    await page.get_by_label("Password").fill(platform.password)
    await page.get_by_role("button", name="Sign in").click()

    warning = page.get_by_role("note")
    await expect(warning).to_contain_text("It asks to change almost everything in Demo Course School")
    await expect(warning).to_contain_text("students")
    await _photograph(page, "consent-every-scope")

    # Keyboard only: focus a box, Space unticks it.
    await page.locator("#keep-new-students").focus()
    await page.keyboard.press("Space")
    await page.locator("#keep-changes-new-courses").focus()
    await page.keyboard.press("Space")
    await expect(page.locator("#keep-new-students")).not_to_be_checked()
    await expect(page.locator("#keep-changes-new-courses")).not_to_be_checked()
    await expect(page.locator("#keep-new-courses")).to_be_checked()
    await _photograph(page, "consent-every-scope-trimmed")

    await page.get_by_role("button", name="Allow").click()
    received = await callback_server.wait(TIMEOUT_MS / 1000)
    assert "code" in received, received
    async with httpx.AsyncClient(timeout=15.0) as http:
        exchanged = await exchange_code(http, meta, reg, request, received["code"])
        assert exchanged.status_code == 200, exchanged.text
        granted = set(exchanged.json()["scope"].split())
        assert set(every) - granted == {"students:read", "students:write", "courses:write"}
        bearer = {"Authorization": f"Bearer {exchanged.json()['access_token']}"}
        api = f"{platform.base_url}/api/v1"
        assert (await http.get(f"{api}/courses", headers=bearer)).status_code == 200
        for method, path, scope in (("GET", "/students", "students:read"), ("POST", "/courses", "courses:write")):
            refused = await http.request(method, api + path, headers=bearer, json={"title": "Trimmed"})
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "insufficient_scope"
            assert f'scope="{scope}"' in refused.headers["www-authenticate"]
    callback_server.assert_idle()
