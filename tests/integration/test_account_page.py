"""Issue 40: the account page: a new password, the browsers signed in now (device,
address, last seen) with "sign out everywhere else", beside the connected apps and the
second factors. Every change there, and every change of a second factor, needs a recent
sign-in (the password or a code entered within RECENT_SIGN_IN): without one the answer
is the confirmation page, and nothing changes; each change sends the person an e-mail.
Every form refuses a token not from its page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from ..support.smtp import SmtpRelay
from .apps_page import FIREFOX_LINUX, SAFARI_MAC, browser
from .flow import PASSWORD, Flow
from .mailbox import deliver, form_token, mailed_app, sign_in, text_of

NEW_PASSWORD = "a brand new passphrase"
RECENT = 300


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(authz_settings, clean_db, redis_client, clock, recent_sign_in=RECENT) as running:
        yield running


async def hash_of(flow: Flow, user: dict[str, str]) -> str:
    return str(await flow.pool.fetchval("SELECT password_hash FROM authz_users WHERE id = $1::uuid", user["id"]))


async def test_a_change_needs_a_recent_sign_in_then_is_made_and_told(
    mailed: tuple[Flow, SmtpRelay], clock: FrozenClock
) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    async with browser(flow, agent=FIREFOX_LINUX) as mine:
        await sign_in(mine, user)
        csrf = await form_token(mine, "/oauth/account")
        before = await hash_of(flow, user)
        clock.advance(RECENT + 1)
        form = {"csrf": csrf, "password": NEW_PASSWORD, "again": NEW_PASSWORD}
        asked = await mine.client.post("/oauth/account/password", data=form)
        assert asked.status_code == 303
        assert asked.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Faccount"
        assert await hash_of(flow, user) == before
        # The second factors' routes ask the same.
        totp = await mine.client.get("/oauth/security/totp")
        assert totp.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fsecurity%2Ftotp"
        renew = await mine.client.post("/oauth/security/renew-codes", data={"csrf": csrf})
        assert renew.headers["location"] == (
            "/oauth/account/confirm?next=" + quote("/oauth/security/confirm?action=renew-codes", safe="")
        )
        remove = await mine.client.post("/oauth/security/remove-totp", data={"csrf": csrf})
        assert remove.status_code == 303 and remove.headers["location"].startswith("/oauth/account/confirm?")
        assert await flow.count("authz_totp") == 0

        confirm = await form_token(mine, asked.headers["location"])
        wrong = await mine.client.post(
            "/oauth/account/confirm", data={"csrf": confirm, "password": "not it", "next": "/oauth/account"}
        )
        assert wrong.status_code == 303 and "failed=1" in wrong.headers["location"]
        assert (
            (await mine.client.post("/oauth/account/password", data=form))
            .headers["location"]
            .startswith("/oauth/account/confirm")
        )
        right = await mine.client.post(
            "/oauth/account/confirm", data={"csrf": confirm, "password": PASSWORD, "next": "/oauth/account"}
        )
        assert right.status_code == 303 and right.headers["location"] == "/oauth/account"
        changed = await mine.client.post("/oauth/account/password", data=form)
        assert changed.status_code == 303 and changed.headers["location"] == "/oauth/account?done=password"
        assert await hash_of(flow, user) != before
    assert await deliver(flow) == 1
    told = relay.accepted[0].message
    assert told["Subject"] == "Your Course School password was changed"
    assert "Firefox on Linux" in text_of(told) and "127.0.0.1" in text_of(told)


async def test_the_browsers_signed_in_now_and_sign_out_everywhere_else(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    async with browser(flow, "10.1.2.3", SAFARI_MAC) as laptop, browser(flow, agent=FIREFOX_LINUX) as mine:
        await sign_in(laptop, user)
        await sign_in(mine, user)
        shown = await mine.client.get("/oauth/account")
        assert shown.status_code == 200
        for said in ("Safari on macOS", "10.1.2.3", "Firefox on Linux", "This browser", "Sign out everywhere else"):
            assert said in shown.text, said
        assert 'href="/oauth/apps"' in shown.text and 'href="/oauth/security"' in shown.text
        csrf = await form_token(mine, "/oauth/account")
        done = await mine.client.post("/oauth/account/sign-out-others", data={"csrf": csrf})
        assert done.status_code == 303 and done.headers["location"] == "/oauth/account?done=signed-out"
        assert (await laptop.client.get("/oauth/account")).status_code == 303  # signed out
        after = await mine.client.get("/oauth/account")
        assert after.status_code == 200 and "Safari on macOS" not in after.text
        assert "You are signed in on this browser only" in after.text
    assert await deliver(flow) == 1
    assert relay.accepted[0].message["Subject"] == ("Your Course School account was signed out on your other browsers")


async def test_the_apps_page_links_to_the_account_page(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    await sign_in(flow, await flow.user("owner"))
    assert 'href="/oauth/account"' in (await flow.client.get("/oauth/apps")).text
    assert 'href="/oauth/account"' in (await flow.client.get("/oauth/security")).text


async def test_forms_not_from_the_page_change_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    user = await flow.user("owner")
    async with browser(flow) as other:
        await sign_in(other, user)
        async with browser(flow) as mine:
            await sign_in(mine, user)
            before = await hash_of(flow, user)
            theirs = await form_token(other, "/oauth/account")  # another browser's token
            for csrf in ("", "0" * 64, theirs):
                posted = await mine.client.post(
                    "/oauth/account/password", data={"csrf": csrf, "password": NEW_PASSWORD, "again": NEW_PASSWORD}
                )
                assert posted.status_code == 403
                assert (
                    await mine.client.post("/oauth/account/sign-out-others", data={"csrf": csrf})
                ).status_code == 403
                confirm = await mine.client.post(
                    "/oauth/account/confirm", data={"csrf": csrf, "password": PASSWORD, "next": "/oauth/account"}
                )
                assert confirm.status_code == 403
            assert await hash_of(flow, user) == before
            assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 2
    assert await deliver(flow) == 0


async def test_a_confirmation_leads_back_only_to_the_accounts_own_pages(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    await sign_in(flow, await flow.user("owner"))
    for away in ("https://evil.example/", "//evil.example/oauth/account", "/oauth/apps/../../x", "/elsewhere"):
        csrf = await form_token(flow, f"/oauth/account/confirm?next={quote(away, safe='')}")
        back = await flow.client.post("/oauth/account/confirm", data={"csrf": csrf, "password": PASSWORD, "next": away})
        assert back.status_code == 303 and back.headers["location"] in ("/oauth/account", away)
        assert not back.headers["location"].startswith(("http", "//", "/elsewhere"))


async def test_a_new_password_breaking_the_rule_changes_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    user = await flow.user("owner")
    await sign_in(flow, user)
    before = await hash_of(flow, user)
    csrf = await form_token(flow, "/oauth/account")
    for password, again, failed in (("short", "short", "rule"), (NEW_PASSWORD, "other passphrase", "differ")):
        posted = await flow.client.post(
            "/oauth/account/password", data={"csrf": csrf, "password": password, "again": again}
        )
        assert posted.status_code == 303 and f"failed={failed}" in posted.headers["location"]
    assert await hash_of(flow, user) == before
    assert await deliver(flow) == 0
