"""Issue 39 in real Chromium, with a real SMTP server the test starts (aiosmtpd) taking
the platform's e-mail, each message parsed: a school's owner sets *only apps the school
approved*; a student's consent page offers to ask; the owner is e-mailed, sees the
request and approves it; the student is e-mailed and signs in. The decline and the
expiry of a request tell the student too. Under *apps may read*, an MCP-style request for
every scope yields a read-only token and the consent page marks the write areas; once
the school approves the app with changes, a step-up grants them.

Every changed page is looked at (both themes, desktop and phone width: contrast, axe-core,
focus, screenshots) by `look` from test_pages_look.py."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import asyncpg
import httpx
import pytest

from courseschool.authz.protocol.school_policy import PENDING

from ..support.infra import temporary_database_blocking
from ..support.oauth_client import authorization_request, discover, exchange_code, register
from ..support.smtp import SmtpRelay, smtp_relay
from .conftest import CallbackServer, Platform, running_platform
from .test_pages_look import VIEWPORTS, _admin, _sign_in, axe_source, device, look, lowest  # noqa: F401

pytestmark = pytest.mark.browser

MAIL_FROM = "Course School <no-reply@school.example>"


@pytest.fixture(scope="module")
def database_url(postgres_admin_url: str, migrated_template: str) -> Iterator[str]:
    """This module's database, apart from the session's platform's: that platform runs a
    mail delivery of its own (to make run's catcher), which would otherwise claim the
    messages this module's relay waits for."""
    with temporary_database_blocking(postgres_admin_url, "cs_e2e_mail", template=migrated_template) as url:
        yield url


@pytest.fixture(scope="module")
def mail_platform(
    database_url: str, redis_url: str, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Platform, SmtpRelay]]:
    """A platform of its own whose e-mail goes to a relay the test runs; its mail delivery
    and housekeeping run often, as a deployment's would, only sooner."""
    with smtp_relay() as relay:
        env = {
            "SMTP_URL": f"smtp+plain://127.0.0.1:{relay.port}",
            "MAIL_FROM": MAIL_FROM,
            "MAIL_INTERVAL": "0.2",
            "HOUSEKEEPING_INTERVAL": "1",
        }
        with running_platform(
            database_url, redis_url, kek, tmp_path_factory.mktemp("mail-platform"), extra_env=env
        ) as running:
            yield running, relay


async def mail_to(relay: SmtpRelay, address: str, subject: str, seconds: float = 90.0) -> EmailMessage:
    """The first message the relay took for `address` whose subject holds `subject`
    (`seconds`: a bound, not a wait: the platform delivers at its next pass, later on a
    loaded machine)."""
    for _ in range(int(seconds * 10)):
        for accepted in relay.accepted:
            message = accepted.message
            if accepted.rcpt_tos == [address] and subject in str(message["Subject"]):
                relay.accepted.remove(accepted)
                return message
        await asyncio.sleep(0.1)
    raise AssertionError(f"no message to {address} about {subject!r} within {seconds} s")


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def school_with(database_url: str, redis_url: str, kek: str, *roles: str) -> dict[str, tuple[str, str]]:
    """A school of the test's own (its policy must not reach the demo school) and one person per role."""
    slug = f"policy-{secrets.token_hex(3)}"
    _admin(database_url, redis_url, kek, "schools", "create", "--slug", slug, "--name", "Riverside Academy")
    people = {}
    for role in roles:
        email, password = f"{role}-{secrets.token_hex(4)}@example.test", secrets.token_urlsafe(18)
        _admin(
            database_url,
            redis_url,
            kek,
            *("users", "create", "--school", slug, "--email", email, "--name", f"Sam {role}", "--role", role),
            f"--password={password}",
        )
        people[role] = (email, password)
    return people


async def set_policy(page: Any, platform: Platform, owner: tuple[str, str], label: str) -> None:
    from playwright.async_api import expect

    await page.goto(f"{platform.base_url}/oauth/school/apps")
    await _sign_in(page, *owner)
    await page.get_by_label(label).check()
    await page.get_by_role("button", name="Save the policy").click()
    await expect(page.get_by_role("status")).to_contain_text("policy is saved")


async def open_app(page: Any, platform: Platform, callback: CallbackServer, reg: dict[str, Any], scope: str) -> Any:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
    request = authorization_request(meta, reg, callback.url, scope=scope)
    await page.goto(request["url"])
    return meta, request


async def second_browser(browser: Any, width: str) -> Any:
    """Another person's browser at the same width."""
    return await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")


async def new_app(platform: Platform, callback: CallbackServer, name: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=15.0) as http:
        return await register(http, await discover(http, platform.base_url), callback.url, client_name=name)


async def test_only_approved_apps_ask_approve_and_sign_in(
    mail_platform: tuple[Platform, SmtpRelay],
    callback_server: CallbackServer,
    device: tuple[str, Any],  # noqa: F811
    lowest: dict,  # noqa: F811
    browser: Any,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    platform, relay = mail_platform
    width, ctx = device
    people = school_with(database_url, redis_url, kek, "owner", "student")
    owner_page = await ctx.new_page()
    await set_policy(owner_page, platform, people["owner"], "Only apps the school approved.")
    await look(owner_page, "school-apps-policy", width, lowest)

    reg = await new_app(platform, callback_server, "Essay Helper")
    student_ctx = await second_browser(browser, width)
    try:
        student = await student_ctx.new_page()
        await open_app(student, platform, callback_server, reg, "openid account:read")
        await _sign_in(student, *people["student"])
        await expect(student.get_by_role("heading", name="This app needs your school's approval")).to_be_visible()
        await expect(student.get_by_role("button", name="Allow")).to_have_count(0)
        await look(student, "consent-needs-approval", width, lowest)
        await student.get_by_label("why do you need it?").fill("To plan my essays")
        await student.get_by_role("button", name="Ask the school").click()
        await expect(student.get_by_role("status")).to_contain_text("You asked your school")
        await look(student, "consent-asked", width, lowest)
        await student.get_by_role("button", name="Back to the app").click()
        denied = await callback_server.wait()
        assert denied["error"] == "access_denied" and denied["error_description"] == PENDING

        asked = await mail_to(relay, people["owner"][0], "asks your school to approve «Essay Helper»")
        assert "- Why: To plan my essays" in text_of(asked) and "- Account: see" in text_of(asked)
        await owner_page.goto(f"{platform.base_url}/oauth/school/apps")
        await expect(owner_page.get_by_text("To plan my essays")).to_be_visible()
        await look(owner_page, "school-apps-request", width, lowest)
        await owner_page.get_by_role("link", name="Approve…").click()
        await expect(owner_page.get_by_text("this one registration only")).to_be_visible()
        await look(owner_page, "school-apps-approve", width, lowest)
        await owner_page.get_by_label("A note to").fill("Good luck with the essays")
        await owner_page.get_by_role("button", name="Approve", exact=True).click()
        await expect(owner_page.get_by_role("status")).to_contain_text("approved for everyone")

        approved = await mail_to(relay, people["student"][0], "approved your request for «Essay Helper»")
        assert "Note from the school: Good luck with the essays" in text_of(approved)
        meta, request = await open_app(student, platform, callback_server, reg, "openid account:read")
        await student.get_by_role("button", name="Allow").click()
        callback = await callback_server.wait()
        async with httpx.AsyncClient(timeout=15.0) as http:
            tokens = await exchange_code(http, meta, reg, request, callback["code"])
        assert tokens.status_code == 200 and tokens.json()["scope"] == "openid account:read"
    finally:
        await student_ctx.close()


async def test_a_declined_and_an_expired_request_are_told(
    mail_platform: tuple[Platform, SmtpRelay],
    callback_server: CallbackServer,
    device: tuple[str, Any],  # noqa: F811
    lowest: dict,  # noqa: F811
    browser: Any,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    platform, relay = mail_platform
    width, ctx = device
    people = school_with(database_url, redis_url, kek, "owner", "student")
    owner_page = await ctx.new_page()
    await set_policy(owner_page, platform, people["owner"], "Only apps the school approved.")
    reg = await new_app(platform, callback_server, "Quiz Maker")
    student_ctx = await second_browser(browser, width)
    try:
        student = await student_ctx.new_page()
        for reason in ("For quizzes", "For quizzes, again"):
            await open_app(student, platform, callback_server, reg, "openid account:read")
            if reason == "For quizzes":
                await _sign_in(student, *people["student"])
            await student.get_by_label("why do you need it?").fill(reason)
            await student.get_by_role("button", name="Ask the school").click()
            await expect(student.get_by_role("status")).to_contain_text("You asked your school")
            await mail_to(relay, people["owner"][0], "«Quiz Maker»")
            if reason != "For quizzes":
                break
            await owner_page.goto(f"{platform.base_url}/oauth/school/apps")
            await owner_page.get_by_role("link", name="Decline…").click()
            await look(owner_page, "school-apps-decline", width, lowest)
            await owner_page.get_by_label("A note to").fill("Use the school's quiz tool")
            await owner_page.get_by_role("button", name="Decline").click()
            await expect(owner_page.get_by_role("status")).to_contain_text("declined")
            declined = await mail_to(relay, people["student"][0], "declined your request for «Quiz Maker»")
            assert "Note from the school: Use the school's quiz tool" in text_of(declined)
        pool = await asyncpg.connect(database_url)
        try:  # the second request's fourteen days pass: housekeeping marks it and tells the student
            await pool.execute(
                "UPDATE authz_app_access_requests SET expires_at = now() - interval '1 second' WHERE decision IS NULL"
                " AND client_id = $1",
                reg["client_id"],
            )
        finally:
            await pool.close()
        expired = await mail_to(relay, people["student"][0], "did not decide your request for «Quiz Maker»")
        assert "expired before anyone decided it" in text_of(expired)
    finally:
        await student_ctx.close()


async def test_apps_may_read_then_a_step_up_after_approval(
    mail_platform: tuple[Platform, SmtpRelay],
    callback_server: CallbackServer,
    device: tuple[str, Any],  # noqa: F811
    lowest: dict,  # noqa: F811
    browser: Any,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    platform, relay = mail_platform
    width, ctx = device
    people = school_with(database_url, redis_url, kek, "owner", "lecturer")
    owner_page = await ctx.new_page()
    await set_policy(owner_page, platform, people["owner"], "Apps may read; changes need the school's approval.")
    reg = await new_app(platform, callback_server, "Course Agent")
    lecturer_ctx = await second_browser(browser, width)
    try:
        lecturer = await lecturer_ctx.new_page()
        async with httpx.AsyncClient(timeout=15.0) as http:
            every = " ".join((await discover(http, platform.base_url))["scopes_supported"])  # what MCP SDKs ask for
        meta, request = await open_app(lecturer, platform, callback_server, reg, every)
        await _sign_in(lecturer, *people["lecturer"])
        await expect(lecturer.get_by_role("heading", name="Needs the school's approval (4)")).to_be_visible()
        await look(lecturer, "consent-read-only", width, lowest, consent=True)
        await lecturer.get_by_label("why do you need it?").fill("To update my course outlines")
        await lecturer.get_by_role("button", name="Ask the school").click()
        await expect(lecturer.get_by_role("status")).to_contain_text("You asked your school")
        await lecturer.get_by_role("button", name="Allow").click()
        callback = await callback_server.wait()
        async with httpx.AsyncClient(timeout=15.0) as http:
            first = (await exchange_code(http, meta, reg, request, callback["code"])).json()
        assert "courses:read" in first["scope"].split()
        assert not [s for s in first["scope"].split() if s.endswith(":write")]

        await mail_to(relay, people["owner"][0], "«Course Agent»")
        await owner_page.goto(f"{platform.base_url}/oauth/school/apps")
        await owner_page.get_by_role("link", name="Approve…").click()
        await owner_page.get_by_label("Only the areas ticked below").check()
        await owner_page.get_by_role("button", name="Approve", exact=True).click()
        await expect(owner_page.get_by_role("status")).to_contain_text("approved for everyone")
        await mail_to(relay, people["lecturer"][0], "approved your request for «Course Agent»")

        meta, request = await open_app(lecturer, platform, callback_server, reg, every)  # the step-up
        await expect(lecturer.get_by_role("heading", name="New: it also asks to")).to_be_visible()
        await lecturer.get_by_role("button", name="Allow").click()
        callback = await callback_server.wait()
        async with httpx.AsyncClient(timeout=15.0) as http:
            more = (await exchange_code(http, meta, reg, request, callback["code"])).json()
        writes = {s for s in more["scope"].split() if s.endswith(":write")}
        assert writes == {"courses:write", "curriculum:write", "events:write", "posts:write"}  # a lecturer's
    finally:
        await lecturer_ctx.close()
