"""A real browser (headless Chromium) through the login and consent pages, with the
authorization response delivered to a loopback callback server, as for a CLI."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from ..support.oauth_client import SCOPE, authorization_request, discover, exchange_code, register, verify_id_token
from .conftest import CallbackServer, Platform

pytestmark = pytest.mark.browser

CLIENT_NAME = "E2E Browser CLI"
TIMEOUT_MS = 15_000


@pytest.fixture
async def context(browser: Any) -> AsyncIterator[Any]:
    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        await ctx.close()


@pytest.fixture
async def client_setup(platform: Platform, callback_server: CallbackServer) -> tuple[dict[str, Any], dict[str, Any]]:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url, client_name=CLIENT_NAME)
    return meta, reg


async def sign_in(page: Any, platform: Platform) -> None:
    from playwright.async_api import expect

    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await expect(page.get_by_text(CLIENT_NAME)).to_be_visible()
    await page.get_by_label("Email").fill(platform.email)
    await page.get_by_label("Password").fill(platform.password)
    await page.get_by_role("button", name="Sign in").click()


async def expect_consent(page: Any) -> None:
    from playwright.async_api import expect

    # A self-registered client's name is its own claim (security review finding 7).
    await expect(page.locator(".claimed .client")).to_have_text(CLIENT_NAME)
    await expect(page.get_by_text("not verified by your school")).to_be_visible()
    await expect(page.get_by_text("an app on this computer")).to_be_visible()
    allowed_before = page.locator("details.group summary", has_text="Allowed before")
    if await allowed_before.count():  # a second approval: what was allowed is folded apart
        await allowed_before.click()
    await expect(page.get_by_text("Your identity: see")).to_be_visible()
    await expect(page.get_by_text("Courses: see")).to_be_visible()
    details = page.get_by_text("See courses, including drafts and prices")
    await expect(details).to_be_hidden()  # folded: one line per area
    box = page.locator('input[name="keep"][id$="-courses"]')  # in "new", or "allowed before"
    courses = page.locator("li", has=box)
    await courses.get_by_text("What exactly").click()  # opens what exactly, without any script
    await expect(details).to_be_visible()
    await expect(box).to_be_checked()  # every line starts ticked
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await expect(page.get_by_role("button", name="Deny")).to_be_visible()


async def answer_consent(page: Any, callback_server: CallbackServer, button: str) -> dict[str, str]:
    from playwright.async_api import expect

    await page.get_by_role("button", name=button).click()
    received = await callback_server.wait(TIMEOUT_MS / 1000)
    await page.wait_for_url(re.compile("^" + re.escape(callback_server.url) + r"\?"))
    await expect(page.get_by_text("You can close this window")).to_be_visible()
    return received


async def redeem(
    platform: Platform, meta: dict[str, Any], reg: dict[str, Any], request: dict[str, str], code: str
) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=15.0) as http:
        response = await exchange_code(http, meta, reg, request, code)
        assert response.status_code == 200, response.text
        assert "no-store" in response.headers.get("cache-control", "")
        token = response.json()
        assert token["token_type"] == "Bearer"
        assert token["scope"] == SCOPE
        await verify_id_token(
            http,
            meta,
            token["id_token"],
            client_id=reg["client_id"],
            nonce=request["nonce"],
            access_token=token["access_token"],
        )
        info = await http.get(meta["userinfo_endpoint"], headers={"Authorization": f"Bearer {token['access_token']}"})
        assert info.status_code == 200, info.text
        assert info.json()["email"] == platform.email
        assert info.json()["sub"]
    return token


async def test_browser_signs_in_consents_and_cli_gets_tokens(
    platform: Platform,
    callback_server: CallbackServer,
    client_setup: tuple[dict, dict],
    context: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    meta, reg = client_setup
    request = authorization_request(meta, reg, callback_server.url)
    page = await context.new_page()
    await page.goto(request["url"])
    await sign_in(page, platform)
    await expect_consent(page)
    assert await page.locator("input[name=password]").count() == 0
    screenshot = tmp_path_factory.mktemp("screenshots") / "consent.png"
    await page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 1000
    print(f"consent page screenshot: {screenshot}")

    received = await answer_consent(page, callback_server, "Allow")
    assert set(received) == {"code", "state", "iss"}
    assert received["state"] == request["state"]
    assert received["iss"] == platform.base_url
    await redeem(platform, meta, reg, request, received["code"])
    callback_server.assert_idle()


async def test_second_authorization_in_same_browser_goes_straight_to_consent(
    platform: Platform,
    callback_server: CallbackServer,
    client_setup: tuple[dict, dict],
    context: Any,
    browser: Any,
) -> None:
    meta, reg = client_setup
    page = await context.new_page()

    first = authorization_request(meta, reg, callback_server.url)
    await page.goto(first["url"])
    await sign_in(page, platform)
    await expect_consent(page)
    first_result = await answer_consent(page, callback_server, "Allow")
    assert first_result["state"] == first["state"]

    # Same browser context: the sign-in session is remembered, consent is asked again
    # (a public loopback client never gets remembered consent).
    second = authorization_request(meta, reg, callback_server.url)
    await page.goto(second["url"])
    await expect_consent(page)
    assert await page.locator("input[name=password]").count() == 0, "the login form was shown again"
    second_result = await answer_consent(page, callback_server, "Allow")
    assert second_result["state"] == second["state"]
    assert second_result["iss"] == platform.base_url
    assert second_result["code"] != first_result["code"]
    await redeem(platform, meta, reg, second, second_result["code"])

    # A different browser (fresh context, no session cookie) must sign in.
    other = await browser.new_context()
    try:
        other_page = await other.new_page()
        third = authorization_request(meta, reg, callback_server.url)
        await other_page.goto(third["url"])
        from playwright.async_api import expect

        await expect(other_page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=TIMEOUT_MS)
    finally:
        await other.close()
    callback_server.assert_idle()


async def test_deny_sends_access_denied_to_the_callback(
    platform: Platform, callback_server: CallbackServer, client_setup: tuple[dict, dict], context: Any
) -> None:
    meta, reg = client_setup
    request = authorization_request(meta, reg, callback_server.url)
    page = await context.new_page()
    await page.goto(request["url"])
    await sign_in(page, platform)
    await expect_consent(page)
    received = await answer_consent(page, callback_server, "Deny")
    assert received["error"] == "access_denied"
    assert received["state"] == request["state"]
    assert received["iss"] == platform.base_url
    assert "code" not in received
    callback_server.assert_idle()
