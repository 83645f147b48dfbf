"""Issue 40 end to end, in real Chromium, with a real SMTP server in the test (aiosmtpd,
tests/support/smtp.py) as the operator's relay: every message is parsed as a mail
reader would, and its link followed in the browser.

- An invitation (`admin users invite`) e-mails a link where the person chooses a
  password and is signed in.
- "Forgot your password?" e-mails a link that works once: it sets a new password,
  signs the browser in, and ends the person's other sessions and their apps' grants.
- An unknown address gets the same page, and no message.
- An expired link is refused with a page that says so. (The link's expiry is moved into
  the past in the database: the 30 minutes are not waited for. The frozen-clock
  integration tests check the time itself, tests/integration/test_password_reset_links.py.)

The platform runs on a database of this module's own: its mail delivery must not share
an outbox with the session's platform, which sends to its own catcher."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from email.message import EmailMessage
from typing import Any

import asyncpg
import httpx
import pytest

from ..support.infra import temporary_database
from ..support.oauth_client import code_flow
from ..support.smtp import SmtpRelay, smtp_relay
from .conftest import Platform, admin_cli, running_platform

pytestmark = pytest.mark.browser
MAIL_FROM = "Course School <no-reply@school.example>"
LINK = re.compile(r"(http://[^\s]+/oauth/password/choose\?token=[A-Za-z0-9_-]+)")


@pytest.fixture(scope="session")
def relay() -> Iterator[SmtpRelay]:
    with smtp_relay() as running:
        yield running


@pytest.fixture(scope="session")
async def links_database(postgres_admin_url: str, migrated_template: str) -> AsyncIterator[str]:
    async with temporary_database(postgres_admin_url, "cs_e2e_links", template=migrated_template) as url:
        yield url


@pytest.fixture(scope="session")
def mailing(
    links_database: str, redis_url: str, kek: str, relay: SmtpRelay, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    mail = {"SMTP_URL": f"smtp+plain://127.0.0.1:{relay.port}", "MAIL_FROM": MAIL_FROM, "MAIL_INTERVAL": "0.2"}
    with running_platform(
        links_database, redis_url, kek, tmp_path_factory.mktemp("links-data"), extra_env=mail
    ) as running:
        yield running


async def message_to(relay: SmtpRelay, email: str, subject: str) -> EmailMessage:
    """The first message to `email` with `subject`, once the relay has it (bounded wait)."""
    for _ in range(300):
        for accepted in list(relay.accepted):
            message = accepted.message
            if accepted.rcpt_tos == [email] and message["Subject"] == subject:
                return message
        await asyncio.sleep(0.1)
    seen = [(a.rcpt_tos, a.message["Subject"]) for a in relay.accepted]
    raise AssertionError(f"no message {subject!r} to {email} within 30 s; the relay has {seen}")


def link_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    found = LINK.search(body.get_content())
    assert found, body.get_content()
    return found.group(1)


def person(platform: Platform, database_url: str, redis_url: str, kek: str) -> tuple[str, str]:
    email, password = f"reset-{secrets.token_hex(4)}@example.test", secrets.token_urlsafe(18)
    admin_cli(
        database_url,
        redis_url,
        kek,
        *("users", "create", "--school", "demo", "--email", email, "--name", "Robin Reset", "--role", "owner"),
        f"--password={password}",
    )
    return email, password


async def sign_in(page: Any, email: str, password: str) -> None:
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()


async def choose(page: Any, password: str, button: str) -> None:
    await page.get_by_label("Password", exact=True).or_(page.get_by_label("New password", exact=True)).fill(password)
    await page.get_by_label("The same password again").fill(password)
    await page.get_by_role("button", name=button).click()


async def test_an_invitation_link_sets_a_password_and_signs_in(
    mailing: Platform, relay: SmtpRelay, browser: Any, links_database: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email = f"invited-{secrets.token_hex(4)}@example.test"
    said = admin_cli(
        links_database,
        redis_url,
        kek,
        *("users", "invite", "--school", "demo", "--email", email, "--name", "Ines Invited", "--role", "lecturer"),
    )
    assert "invited_until" in said and "password" not in said
    message = await message_to(relay, email, "You are invited to Demo Course School on Course School")
    assert message["From"].addresses[0].addr_spec == "no-reply@school.example"
    ctx = await browser.new_context()
    page = await ctx.new_page()
    await page.goto(link_of(message))
    await expect(page.get_by_role("heading", name="Choose your password")).to_be_visible()
    await choose(page, "an invited passphrase", "Set my password and sign in")
    await expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("Welcome to Course School")
    await expect(page.get_by_text(email)).to_be_visible()
    await ctx.close()
    # The password works wherever a person signs in.
    await code_flow(mailing.base_url, email, "an invited passphrase", "openid")


async def test_a_reset_link_works_once_and_ends_old_sessions_and_grants(
    mailing: Platform, relay: SmtpRelay, browser: Any, links_database: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, password = person(mailing, links_database, redis_url, kek)
    reg, tokens = await code_flow(mailing.base_url, email, password, "openid courses:read", client_name="Before CLI")
    old = await browser.new_context()
    old_page = await old.new_page()
    await old_page.goto(f"{mailing.base_url}/oauth/account")
    await sign_in(old_page, email, password)
    await expect(old_page.get_by_role("heading", name="Your account")).to_be_visible()

    ctx = await browser.new_context()
    page = await ctx.new_page()
    await page.goto(f"{mailing.base_url}/oauth/signin")
    await page.get_by_role("link", name="Forgot your password?").click()
    await page.get_by_label("Email").fill(email)
    await page.get_by_role("button", name="Send me a link").click()
    await expect(page.get_by_role("status")).to_contain_text("If an account uses that address")
    link = link_of(await message_to(relay, email, "Choose a new Course School password"))
    await page.goto(link)
    await choose(page, "a fresh new passphrase", "Set my new password")
    await expect(page.get_by_role("status")).to_contain_text("Your new password is set")

    await page.goto(link)  # once only
    await expect(page.get_by_role("heading", name="This link was used already")).to_be_visible()
    await old_page.goto(f"{mailing.base_url}/oauth/account")  # the old session ended
    await expect(old_page.get_by_role("heading", name="Sign in")).to_be_visible()
    async with httpx.AsyncClient(timeout=15) as http:  # the app's grant ended
        refreshed = await http.post(
            f"{mailing.base_url}/api/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": reg["client_id"],
            },
        )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    await old.close()
    await ctx.close()


async def test_an_unknown_address_gets_the_same_page_and_no_message(
    mailing: Platform, relay: SmtpRelay, browser: Any, links_database: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, _ = person(mailing, links_database, redis_url, kek)
    unknown = f"nobody-{secrets.token_hex(4)}@example.test"
    ctx = await browser.new_context()
    page = await ctx.new_page()
    answers = []
    for address in (unknown, email):
        await page.goto(f"{mailing.base_url}/oauth/password/forgot")
        await page.get_by_label("Email").fill(address)
        await page.get_by_role("button", name="Send me a link").click()
        await expect(page.get_by_role("status")).to_be_visible()
        answers.append((page.url, await page.locator("main").inner_text()))
    assert answers[0] == answers[1]
    await ctx.close()
    # The known address's message came after the unknown one's would have (the outbox
    # sends in order): by then, nothing went to the unknown address.
    await message_to(relay, email, "Choose a new Course School password")
    assert not [a for a in relay.accepted if unknown in a.rcpt_tos]


async def test_an_expired_link_is_refused_with_a_clear_page(
    mailing: Platform, relay: SmtpRelay, browser: Any, links_database: str, redis_url: str, kek: str
) -> None:
    from playwright.async_api import expect

    email, password = person(mailing, links_database, redis_url, kek)
    async with httpx.AsyncClient(timeout=15) as http:
        page_html = (await http.get(f"{mailing.base_url}/oauth/password/forgot")).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page_html)
        assert csrf
        sent = await http.post(
            f"{mailing.base_url}/oauth/password/forgot", data={"csrf": csrf.group(1), "email": email}
        )
        assert sent.status_code == 303
    link = link_of(await message_to(relay, email, "Choose a new Course School password"))
    conn = await asyncpg.connect(links_database)
    try:
        moved = await conn.execute(
            "UPDATE authz_account_links l SET expires_at = now() - interval '1 second' FROM authz_users u "
            "WHERE u.id = l.user_id AND u.email = $1",
            email,
        )
        assert moved == "UPDATE 1"
    finally:
        await conn.close()
    ctx = await browser.new_context()
    page = await ctx.new_page()
    response = await page.goto(link)
    assert response is not None and response.status == 410
    await expect(page.get_by_role("heading", name="This link has expired")).to_be_visible()
    await expect(page.get_by_role("link", name="Ask for a new link")).to_be_visible()
    await ctx.close()
    await code_flow(mailing.base_url, email, password, "openid")  # the old password still works
