"""Issue 40: "Forgot your password?" sends a single-use link (30 minutes) through the
operator's relay, the same page and the same work whether or not the address has an
account; the link's page sets a new password once, ends the person's sessions and
grants as an administrator's reset does, and signs the browser in. Only the link's
digest is in the database, and its message's copy is sealed, then cleared once sent. A
link used, expired, superseded or of another person, and a form not from its page,
change nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock
from courseschool.common.secrets import digest

from ..support.smtp import SmtpRelay
from .apps_page import approve, browser
from .flow import PASSWORD, Flow
from .mailbox import deliver, form_token, link_form_token, link_in, mailed_app, open_link, sign_in, text_of

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(authz_settings, clean_db, redis_client, clock) as running:
        yield running


async def ask_reset(flow: Flow, email: str) -> str:
    """The page's form posted with `email`: where the answer leads."""
    csrf = await form_token(flow, "/oauth/password/forgot")
    sent = await flow.client.post("/oauth/password/forgot", data={"csrf": csrf, "email": email})
    assert sent.status_code == 303, sent.text
    return sent.headers["location"]


async def choose(flow: Flow, token: str, password: str = NEW_PASSWORD, again: str | None = None) -> Any:
    csrf = await link_form_token(flow, token)
    return await flow.client.post(
        "/oauth/password/choose",
        data={"csrf": csrf, "token": token, "password": password, "again": password if again is None else again},
    )


async def password_works(flow: Flow, user: dict[str, str], password: str) -> bool:
    async with browser(flow) as other:
        shown = await other.client.get("/oauth/signin")
        csrf = shown.text.split('name="csrf" value="')[1].split('"')[0]
        done = await other.client.post(
            "/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": password}
        )
        return "cs_session=" in done.headers.get("set-cookie", "")


async def test_a_reset_link_works_once_and_ends_sessions_and_grants(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    held = await approve(flow, user, client_name="Agent before the reset")  # a grant, and a session in this jar
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 1

    async with browser(flow) as forgetful:
        assert await ask_reset(forgetful, user["email"]) == "/oauth/password/forgot?sent=1"
        sent_page = await forgetful.client.get("/oauth/password/forgot?sent=1")
        assert "If an account uses that address, we sent it a link" in sent_page.text
        stored = await flow.pool.fetchrow(
            "SELECT details::text, sealed FROM authz_mail_outbox WHERE kind = 'password_reset'"
        )
        assert stored["sealed"] is not None
        assert await deliver(flow) == 2  # the new connection's message, then the link's
        message = relay.accepted[1].message
        assert message["To"].addresses[0].addr_spec == user["email"]
        assert message["Subject"] == "Choose a new Course School password"
        token = link_in(message)
        assert "works once" in text_of(message)
        assert "Your passkeys stay as they are" in text_of(message) and "/oauth/security" in text_of(message)
        # Only its digest is stored; the message's sealed copy is gone once sent.
        assert await flow.count("authz_account_links") == 1
        assert await flow.pool.fetchval("SELECT token_hash FROM authz_account_links") == digest(token)
        assert token not in stored["details"] and token.encode() not in bytes(stored["sealed"])
        assert await flow.pool.fetchval("SELECT sealed FROM authz_mail_outbox WHERE kind = 'password_reset'") is None

        shown = await open_link(forgetful, token)
        assert shown.status_code == 200 and "Choose a new password" in shown.text and user["email"] in shown.text
        done = await choose(forgetful, token)
        assert done.status_code == 303 and done.headers["location"] == "/oauth/account?done=reset"
        assert "cs_session=" in done.headers["set-cookie"]
        account = await forgetful.client.get(done.headers["location"])
        assert account.status_code == 200 and "Your new password is set" in account.text
        assert "Your passkeys stay as they were" in account.text and 'href="/oauth/security"' in account.text

        csrf = await form_token(forgetful, "/oauth/password/forgot")  # this browser's page token (the same cookie)
        again = await forgetful.client.post(
            "/oauth/password/choose", data={"csrf": csrf, "token": token, "password": "x" * 12, "again": "x" * 12}
        )
        assert again.status_code == 403  # a token of another form of the page is no token of this one
        csrf = shown.text.split('name="csrf" value="')[1].split('"')[0]
        again = await forgetful.client.post(
            "/oauth/password/choose",
            data={
                "csrf": csrf,
                "token": token,
                "password": "yet another passphrase",
                "again": "yet another passphrase",
            },
        )
        assert again.status_code == 410 and "This link was used already" in again.text
        assert (await open_link(forgetful, token)).status_code == 410

    # The old session and the grant ended, as an administrator's reset ends them.
    assert (await flow.client.get("/oauth/account")).status_code == 303
    assert await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE id = $1", held["grant_id"]) == (
        "password_reset"
    )
    assert await password_works(flow, user, NEW_PASSWORD)
    assert not await password_works(flow, user, PASSWORD)
    assert not await password_works(flow, user, "yet another passphrase")
    assert await deliver(flow) == 1  # the person is told their password was reset
    assert relay.accepted[2].message["Subject"] == "Your Course School password was reset"
    assert "Your passkeys stay as they were" in text_of(relay.accepted[2].message)


async def test_an_unknown_address_gets_the_same_page_and_no_message(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    async with browser(flow) as visitor:
        unknown = await ask_reset(visitor, "nobody-here@example.test")
        known = await ask_reset(visitor, user["email"])
        assert unknown == known == "/oauth/password/forgot?sent=1"
    assert await flow.count("authz_account_links") == 1
    assert await deliver(flow) == 1
    assert [a.rcpt_tos for a in relay.accepted] == [[user["email"]]]


async def test_an_expired_link_is_refused_with_a_clear_page(mailed: tuple[Flow, SmtpRelay], clock: FrozenClock) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    await ask_reset(flow, user["email"])
    assert await deliver(flow) == 1
    token = link_in(relay.accepted[0].message)
    csrf = await link_form_token(flow, token)
    clock.advance(30 * 60)
    shown = await open_link(flow, token)
    assert shown.status_code == 410 and "This link has expired" in shown.text
    posted = await flow.client.post(
        "/oauth/password/choose", data={"csrf": csrf, "token": token, "password": NEW_PASSWORD, "again": NEW_PASSWORD}
    )
    assert posted.status_code == 410 and "Nothing was changed" in posted.text
    assert await password_works(flow, user, PASSWORD)
    assert await flow.pool.fetchval("SELECT used_at FROM authz_account_links") is None


async def test_an_unsent_message_of_an_expired_link_is_never_sent(
    mailed: tuple[Flow, SmtpRelay], clock: FrozenClock
) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    await ask_reset(flow, user["email"])
    clock.advance(30 * 60)
    assert await deliver(flow) == 0 and relay.accepted == []
    swept = await components_sweep(flow)
    assert swept["mail_links"] == 1
    assert await flow.count("authz_mail_outbox") == 0


async def components_sweep(flow: Flow) -> dict[str, int]:
    from .mailbox import components

    return dict(await components(flow).housekeeping.sweep())


async def test_a_newer_link_supersedes_the_earlier_one(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    await ask_reset(flow, user["email"])
    await ask_reset(flow, user["email"])
    assert await deliver(flow) == 2
    first, second = (link_in(a.message) for a in relay.accepted)
    assert (await open_link(flow, first)).status_code == 410
    assert (await open_link(flow, second)).status_code == 200


async def test_a_link_of_another_person_changes_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    victim, other = await flow.user("owner"), await flow.user("student")
    await ask_reset(flow, victim["email"])
    assert await deliver(flow) == 1
    token = link_in(relay.accepted[0].message)
    async with browser(flow) as someone:
        await sign_in(someone, other)
        shown = await open_link(someone, token)
        assert shown.status_code == 409 and "This link is for another account" in shown.text
        csrf = shown.text  # no form on the refusal page: post with a token of this browser's own page
        assert 'name="csrf"' not in csrf
    async with browser(flow) as holder:  # the link's page opened elsewhere, then posted by the other person's browser
        csrf = await link_form_token(holder, token)
        link_cookie = holder.client.cookies.get("cs_link")
        async with browser(flow) as someone:
            await sign_in(someone, other)
            someone.client.cookies.set("cs_link", link_cookie or "", domain="127.0.0.1", path="/oauth/password")
            posted = await someone.client.post(
                "/oauth/password/choose",
                data={"csrf": csrf, "token": token, "password": NEW_PASSWORD, "again": NEW_PASSWORD},
            )
            assert posted.status_code == 409
    assert await password_works(flow, victim, PASSWORD)
    assert await flow.pool.fetchval("SELECT used_at FROM authz_account_links") is None


async def test_forms_not_from_their_page_change_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    no_cookie = await flow.client.post("/oauth/password/forgot", data={"csrf": "0" * 64, "email": user["email"]})
    assert no_cookie.status_code == 403
    await form_token(flow, "/oauth/password/forgot")  # the page's cookie is set now
    forged = await flow.client.post("/oauth/password/forgot", data={"csrf": "0" * 64, "email": user["email"]})
    assert forged.status_code == 403
    assert await flow.count("authz_account_links") == 0 and await flow.count("authz_mail_outbox") == 0

    await ask_reset(flow, user["email"])
    assert await deliver(flow) == 1
    token = link_in(relay.accepted[0].message)
    await link_form_token(flow, token)
    for csrf in ("", "0" * 64):
        posted = await flow.client.post(
            "/oauth/password/choose",
            data={"csrf": csrf, "token": token, "password": NEW_PASSWORD, "again": NEW_PASSWORD},
        )
        assert posted.status_code == 403
    assert await password_works(flow, user, PASSWORD)
    assert await flow.pool.fetchval("SELECT used_at FROM authz_account_links") is None


async def test_a_password_against_the_rule_keeps_the_link(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    await ask_reset(flow, user["email"])
    assert await deliver(flow) == 1
    token = link_in(relay.accepted[0].message)
    short = await choose(flow, token, "short")
    assert short.status_code == 303 and "failed=rule" in short.headers["location"]
    assert "at least 10" in (await flow.client.get(short.headers["location"])).text.lower()
    differ = await choose(flow, token, NEW_PASSWORD, "something else entirely")
    assert differ.status_code == 303 and "failed=differ" in differ.headers["location"]
    assert await flow.pool.fetchval("SELECT used_at FROM authz_account_links") is None
    assert (await choose(flow, token)).status_code == 303
    assert await password_works(flow, user, NEW_PASSWORD)


async def test_asking_for_links_is_rate_limited(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    user = await flow.user("owner")
    statuses = []
    for _ in range(4):  # three per address typed in, per 15 minutes
        csrf = await form_token(flow, "/oauth/password/forgot")
        answer = await flow.client.post("/oauth/password/forgot", data={"csrf": csrf, "email": user["email"]})
        statuses.append(answer.status_code)
    assert statuses == [303, 303, 303, 429]
    assert await flow.count("authz_account_links") == 3


async def test_the_done_page_says_the_passkeys_stay_after_a_reset(flow: Flow) -> None:
    """A reset leaves the account's passkeys: the page says so and links to where they are reviewed."""
    reset = await flow.client.get("/oauth/password/done?invited=0")
    assert "Your passkeys stay as they were" in reset.text and 'href="/oauth/security"' in reset.text
    invited = await flow.client.get("/oauth/password/done?invited=1")
    assert invited.status_code == 200 and "passkeys" not in invited.text
