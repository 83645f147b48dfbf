"""Issue 40 in real Chromium: a person sets up an authenticator app on their security
page (the test computes the codes from the key the page shows, as an app would), signs
in to an app with their password and a code, a code used once is refused, a recovery
code works once; a school that requires two-step sign-in of its owners takes an owner
without one to the set-up right after the password, before the consent page.

Each test makes a school of its own with the admin CLI: the requirement is the school's,
and the demo school is every other test's."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import httpx
import pyotp
import pytest

from ..support.oauth_client import SCOPE, authorization_request, discover, register
from .conftest import CallbackServer, Platform, admin_cli

pytestmark = pytest.mark.browser


def new_school(database_url: str, redis_url: str, kek: str) -> str:
    slug = f"two-step-{secrets.token_hex(3)}"
    admin_cli(database_url, redis_url, kek, "schools", "create", "--slug", slug, "--name", f"School {slug}")
    return slug


def new_person(database_url: str, redis_url: str, kek: str, school: str, role: str) -> tuple[str, str]:
    email, password = f"{role}-{secrets.token_hex(4)}@example.test", secrets.token_urlsafe(18)
    admin_cli(
        database_url,
        redis_url,
        kek,
        *("users", "create", "--school", school, "--email", email, "--name", f"A {role}", "--role", role),
        f"--password={password}",
    )
    return email, password


async def fresh_code(secret: str, used: set[str]) -> str:
    """The app's code now, once it is one not used yet (a new 30-second step)."""
    totp = pyotp.TOTP(secret)
    for _ in range(70):
        code = totp.at(time.time())
        if code not in used:
            used.add(code)
            return code
        await asyncio.sleep(0.5)
    raise AssertionError("no new code within 35 seconds")


async def sign_in(page: Any, email: str, password: str) -> None:
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()


async def open_app(page: Any, platform: Platform, callback_server: CallbackServer, name: str) -> None:
    from playwright.async_api import expect

    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url, client_name=name)
    await page.goto(authorization_request(meta, reg, callback_server.url, scope=SCOPE)["url"])
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


async def test_authenticator_app_codes_once_and_recovery_codes_once(
    platform: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    school = new_school(database_url, redis_url, kek)
    email, password = new_person(database_url, redis_url, kek, school, "owner")
    used: set[str] = set()

    own = await browser.new_context()
    page = await own.new_page()
    await page.goto(f"{platform.base_url}/oauth/security")
    await sign_in(page, email, password)
    await page.get_by_role("link", name="Set up an authenticator app").click()
    await expect(page.get_by_role("img", name="QR code to set up your authenticator app")).to_be_visible()
    secret = (await page.get_by_label("Setup key").inner_text()).replace(" ", "")
    await page.get_by_label("Code from the app").fill(await fresh_code(secret, used))
    await page.get_by_role("button", name="Turn on two-step sign-in").click()
    await expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = await page.locator(".recovery-codes code").all_inner_texts()
    assert len(codes) == 10
    await page.get_by_role("link", name="I have saved them: continue").click()
    await expect(page.get_by_text("You sign in with your password and a code")).to_be_visible()
    await page.reload()  # the codes were shown once: the page lists how many are left, never them
    await expect(page.get_by_text("10 of 10 left")).to_be_visible()
    await own.close()

    async def to_code_page(name: str) -> Any:
        ctx = await browser.new_context()
        page = await ctx.new_page()
        await open_app(page, platform, callback_server, name)
        await sign_in(page, email, password)
        await expect(page.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
        return ctx, page

    ctx, page = await to_code_page("Two-step CLI")
    code = await fresh_code(secret, used)
    await page.get_by_label("Code").fill(code)
    await page.get_by_role("button", name="Continue").click()
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await ctx.close()

    ctx, page = await to_code_page("Two-step CLI again")
    await page.get_by_label("Code").fill(code)  # the same code again
    await page.get_by_role("button", name="Continue").click()
    await expect(page.get_by_role("alert")).to_contain_text("That code is not right, or was used already")
    await page.get_by_label("Code").fill(codes[0])
    await page.get_by_role("button", name="Continue").click()
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await ctx.close()

    ctx, page = await to_code_page("Two-step CLI third")
    await page.get_by_label("Code").fill(codes[0])  # the recovery code again
    await page.get_by_role("button", name="Continue").click()
    await expect(page.get_by_role("alert")).to_contain_text("That code is not right, or was used already")
    await ctx.close()


async def test_a_school_requiring_two_step_takes_its_owner_to_the_set_up_before_consent(
    platform: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    school = new_school(database_url, redis_url, kek)
    email, password = new_person(database_url, redis_url, kek, school, "owner")
    other_owner = new_person(database_url, redis_url, kek, school, "owner")

    ctx = await browser.new_context()
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/school/security")
    await sign_in(page, *other_owner)
    await page.get_by_label("Owners and admins").check()
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved")
    await ctx.close()

    ctx = await browser.new_context()
    page = await ctx.new_page()
    await open_app(page, platform, callback_server, "Owner's CLI")
    await sign_in(page, email, password)
    await expect(page.get_by_role("heading", name="Set up two-step sign-in")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("asks you to sign in in two steps")
    assert await page.get_by_role("button", name="Allow").count() == 0
    secret = (await page.get_by_label("Setup key").inner_text()).replace(" ", "")
    await page.get_by_label("Code from the app").fill(await fresh_code(secret, set()))
    await page.get_by_role("button", name="Turn on two-step sign-in").click()
    await expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    assert len(await page.locator(".recovery-codes code").all_inner_texts()) == 10
    await page.get_by_role("link", name="I have saved them: continue").click()
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await ctx.close()

    reset = admin_cli(database_url, redis_url, kek, "users", "reset-second-factors", email)
    assert "totp" in reset
    ctx = await browser.new_context()  # reset: asked to set an app up again, the school still requires it
    page = await ctx.new_page()
    await open_app(page, platform, callback_server, "Owner's CLI after reset")
    await sign_in(page, email, password)
    await expect(page.get_by_role("heading", name="Set up two-step sign-in")).to_be_visible()
    await ctx.close()
