"""Issue 40, passkeys in real Chromium, with a virtual authenticator of the DevTools
protocol's WebAuthn domain (CTAP2, internal, resident keys, user verification): a person
adds a passkey on their security page, signs out, and signs in to an app with the
passkey alone; with the passkey their second factor, the password then the passkey; the
passkey removed, the password alone again. The pages are our own script's: no other.
Where the school requires two-step sign-in, an owner without a second factor meets it
with a passkey at the set-up step after the password, before consent.

The platform's public origin is http://localhost:PORT: WebAuthn refuses an IP address
as relying-party id, and http is a secure context on localhost only. The pages of
passkeys are also looked at (axe-core, contrast, focus, both themes, both widths) and
photographed into test-artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import CallbackServer, Platform, create_person, running_platform
from .test_pages_look import VIEWPORTS, _start, axe_source, device, look, lowest  # noqa: F401
from .test_two_step_sign_in import new_person, new_school

pytestmark = pytest.mark.browser

AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
    "automaticPresenceSimulation": True,
}


@pytest.fixture(scope="module")
def localhost(
    database_url: str, redis_url: str, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    data_dir = tmp_path_factory.mktemp("platform-localhost")
    with running_platform(database_url, redis_url, kek, data_dir, public_host="localhost") as running:
        assert running.base_url.startswith("http://localhost:")
        yield running


async def _sign_in(page: Any, email: str, password: str) -> None:
    """The password form (exactly its button: the passkey's says "Sign in with a passkey")."""
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in", exact=True).click()


async def with_authenticator(page: Any) -> tuple[Any, str]:
    """The page's virtual authenticator (DevTools protocol, WebAuthn domain)."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable", {"enableUI": False})
    added = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})
    return cdp, added["authenticatorId"]


async def credentials(cdp: Any, authenticator_id: str) -> list[dict[str, Any]]:
    return (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id}))["credentials"]


async def sign_out(page: Any, platform: Platform) -> None:
    from playwright.async_api import expect

    await page.goto(f"{platform.base_url}/oauth/logout")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="You are signed out")).to_be_visible()


async def approve_and_get_code(page: Any, callback_server: CallbackServer) -> dict[str, str]:
    from playwright.async_api import expect

    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await page.get_by_role("button", name="Allow").click()
    return await callback_server.wait(15.0)


async def test_a_passkey_signs_in_alone_then_as_the_second_step_then_is_removed(
    localhost: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, password = create_person(database_url, redis_url, kek, name="Pat Passkey", role="owner")
    ctx = await browser.new_context()
    scripts: list[str] = []
    ctx.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page = await ctx.new_page()
    cdp, authenticator_id = await with_authenticator(page)

    await page.goto(f"{localhost.base_url}/oauth/security")
    await _sign_in(page, email, password)
    await page.get_by_role("link", name="Add a passkey").click()
    await expect(page.get_by_role("heading", name="Add a passkey")).to_be_visible()
    await page.get_by_label("Name").fill("This browser")
    await page.get_by_role("button", name="Create the passkey").click()
    await expect(page.get_by_role("status")).to_contain_text("Your passkey was added")
    assert len(await page.locator(".recovery-codes code").all_inner_texts()) == 10  # the first factor's codes, once
    await page.get_by_role("link", name="I have saved them: continue").click()
    await expect(page.get_by_role("list", name="Your passkeys")).to_contain_text("This browser")
    await expect(page.get_by_text("Adding a passkey needs a browser")).to_be_hidden()  # this one does
    [stored] = await credentials(cdp, authenticator_id)
    assert stored["isResidentCredential"]  # discoverable: it signs in without a username

    await sign_out(page, localhost)
    await _start(localhost, callback_server, page, name="Passkey CLI")
    await page.get_by_role("button", name="Sign in with a passkey").click()  # no email, no password
    assert "code" in await approve_and_get_code(page, callback_server)

    await sign_out(page, localhost)
    await _start(localhost, callback_server, page, name="Passkey CLI second step")
    await _sign_in(page, email, password)
    await expect(page.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
    await page.get_by_role("button", name="Use your passkey").click()
    assert "code" in await approve_and_get_code(page, callback_server)

    await page.goto(f"{localhost.base_url}/oauth/security")
    await page.get_by_role("link", name="Remove «This browser»").click()
    await expect(page.get_by_role("heading", name="Remove the passkey «This browser»?")).to_be_visible()
    await page.get_by_role("button", name="Remove the passkey").click()
    await expect(page.get_by_role("status")).to_contain_text("The passkey was removed")
    await expect(page.get_by_text("You have no passkeys.")).to_be_visible()

    await sign_out(page, localhost)
    await _start(localhost, callback_server, page, name="Passkey CLI after removal")
    await _sign_in(page, email, password)  # the password alone again: no second step
    assert "code" in await approve_and_get_code(page, callback_server)
    assert {s.rsplit("/", 1)[-1] for s in scripts} == {"passkeys.js", "local-time.js"}
    assert all(s.startswith(localhost.base_url) for s in scripts)
    await ctx.close()


async def test_passkey_pages_look(
    localhost: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],  # noqa: F811 (the fixture of test_pages_look)
    lowest: dict,  # noqa: F811
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """Axe-core, contrast, focus and screenshots of the passkeys' pages in both themes."""
    from playwright.async_api import expect

    width, ctx = device
    email, password = create_person(database_url, redis_url, kek, name="Lou Look", role="owner")
    page = await ctx.new_page()
    await with_authenticator(page)
    await _start(localhost, callback_server, page, name="Passkey look CLI")
    await expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_visible()
    await look(page, "passkey-login", width, lowest)
    await page.goto(f"{localhost.base_url}/oauth/security")
    await _sign_in(page, email, password)
    await look(page, "passkey-security-none", width, lowest)
    await page.get_by_role("link", name="Add a passkey").click()
    await look(page, "passkey-add", width, lowest)
    await page.get_by_label("Name").fill("Look laptop")
    await page.get_by_role("button", name="Create the passkey").click()
    await expect(page.get_by_role("status")).to_contain_text("Your passkey was added")
    await look(page, "passkey-first-codes", width, lowest)
    await page.get_by_role("link", name="I have saved them: continue").click()
    await expect(page.get_by_role("list", name="Your passkeys")).to_contain_text("Look laptop")
    await look(page, "passkey-security", width, lowest)
    await page.get_by_role("link", name="Rename «Look laptop»").click()
    await look(page, "passkey-rename", width, lowest)
    await page.goto(f"{localhost.base_url}/oauth/security")
    await page.get_by_role("link", name="Remove «Look laptop»").click()
    await look(page, "passkey-remove", width, lowest)
    await page.goto(f"{localhost.base_url}/oauth/logout")
    await page.get_by_role("button", name="Sign out").click()
    await _start(localhost, callback_server, page, name="Passkey look CLI 2")
    await _sign_in(page, email, password)
    await expect(page.get_by_role("button", name="Use your passkey")).to_be_visible()
    await look(page, "passkey-second-step", width, lowest)
    assert VIEWPORTS[width]


async def test_without_javascript_no_passkey_is_offered_and_the_password_works(
    localhost: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, password = create_person(database_url, redis_url, kek, name="Nora Noscript", role="owner")
    ctx = await browser.new_context(java_script_enabled=False)
    page = await ctx.new_page()
    await _start(localhost, callback_server, page, name="No-script CLI")
    await expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_hidden()
    await _sign_in(page, email, password)
    assert "code" in await approve_and_get_code(page, callback_server)
    await page.goto(f"{localhost.base_url}/oauth/security")
    await expect(page.get_by_text("Adding a passkey needs a browser that supports passkeys")).to_be_visible()
    await expect(page.get_by_role("link", name="Add a passkey")).to_be_hidden()
    await ctx.close()


async def required_of_an_owner(
    browser: Any, platform: Platform, database_url: str, redis_url: str, kek: str
) -> tuple[str, str]:
    """An owner without a second factor, of a new school that requires two steps of owners."""
    from playwright.async_api import expect

    school = new_school(database_url, redis_url, kek)
    other_owner = new_person(database_url, redis_url, kek, school, "owner")
    ctx = await browser.new_context()
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/school/security")
    await _sign_in(page, *other_owner)
    await page.get_by_label("Owners and admins").check()
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved")
    await ctx.close()
    return new_person(database_url, redis_url, kek, school, "owner")


async def test_the_school_requirement_is_met_with_a_passkey_before_consent(
    localhost: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, password = await required_of_an_owner(browser, localhost, database_url, redis_url, kek)
    ctx = await browser.new_context()
    page = await ctx.new_page()
    cdp, authenticator_id = await with_authenticator(page)
    await _start(localhost, callback_server, page, name="Required passkey CLI")
    await _sign_in(page, email, password)
    await expect(page.get_by_role("heading", name="Set up two-step sign-in")).to_be_visible()
    await expect(page.locator(".notice")).to_contain_text("then a passkey or a code from an app")
    assert await page.get_by_role("button", name="Allow").count() == 0
    await expect(page.get_by_label("Setup key")).to_be_visible()  # the app stays offered
    await page.get_by_label("Name").fill("Owner's laptop")
    await page.get_by_role("button", name="Create a passkey").click()
    await expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("Your passkey was added")
    assert len(await page.locator(".recovery-codes code").all_inner_texts()) == 10
    assert len(await credentials(cdp, authenticator_id)) == 1
    await page.get_by_role("link", name="I have saved them: continue").click()
    assert "code" in await approve_and_get_code(page, callback_server)

    await sign_out(page, localhost)
    await _start(localhost, callback_server, page, name="Required passkey CLI again")
    await _sign_in(page, email, password)  # now the passkey is the second step
    await expect(page.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
    await page.get_by_role("button", name="Use your passkey").click()
    assert "code" in await approve_and_get_code(page, callback_server)
    await page.goto(f"{localhost.base_url}/oauth/security")
    await expect(page.get_by_text("10 of 10 left")).to_be_visible()
    await ctx.close()


async def test_the_required_set_up_with_a_passkey_looks(
    localhost: Platform,
    callback_server: CallbackServer,
    browser: Any,
    device: tuple[str, Any],  # noqa: F811 (the fixture of test_pages_look)
    lowest: dict,  # noqa: F811
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """Axe-core, contrast, focus and screenshots of the set-up step offering a passkey, and
    of the recovery codes after it, in both themes."""
    from playwright.async_api import expect

    width, ctx = device
    email, password = await required_of_an_owner(browser, localhost, database_url, redis_url, kek)
    page = await ctx.new_page()
    await with_authenticator(page)
    await _start(localhost, callback_server, page, name="Required passkey look CLI")
    await _sign_in(page, email, password)
    await expect(page.get_by_role("button", name="Create a passkey")).to_be_visible()
    await look(page, "enrol-required-passkey", width, lowest)
    await page.get_by_role("button", name="Create a passkey").click()
    await expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    await look(page, "enrol-required-passkey-codes", width, lowest)
