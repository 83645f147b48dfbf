"""Review finding 3: an e-mailed link's token (a password reset's, an invitation's)
ended up in the gateway's access log, which logs the path with its query: the link's
own request, and the redirect after a refused password, which put the token back in
the URL. Now the link's first request holds the token for the browser (its `cs_link`
cookie) and answers a redirect to the page without it; no redirect carries it again;
the form works from what is held. (The gateway's log format: tests/deploy.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock
from courseschool.common.secrets import digest

from ..support.smtp import SmtpRelay
from .apps_page import browser
from .flow import Flow
from .mailbox import CSRF, deliver, link_in, mailed_app
from .test_password_reset_links import NEW_PASSWORD, ask_reset, password_works

CHOOSE = "/oauth/password/choose"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(authz_settings, clean_db, redis_client, clock) as running:
        yield running


async def _a_link(flow: Flow, relay: SmtpRelay, user: dict[str, str]) -> str:
    await ask_reset(flow, user["email"])
    assert await deliver(flow) == 1
    return link_in(relay.accepted[-1].message)


async def test_the_link_is_held_and_the_url_loses_the_token(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    token = await _a_link(flow, relay, user)
    opened = await flow.client.get(CHOOSE, params={"token": token})
    assert opened.status_code == 303 and opened.headers["location"] == CHOOSE
    binding = flow.client.cookies.get("cs_link")
    assert binding and "cs_link=" in opened.headers["set-cookie"]
    held = f"authz:held-link:{digest(binding).hex()}"
    ttl = await flow.redis.ttl(held)
    assert 0 < ttl <= flow.client.app.state.authz.account_pages.settings.interaction_ttl  # type: ignore[attr-defined]
    page = await flow.client.get(CHOOSE)
    assert page.status_code == 200 and "Choose a new password" in page.text and token not in page.text

    # A refused password: back to the page, the token in no URL; the link still works.
    csrf = CSRF.search(page.text).group(1)
    short = await flow.client.post(CHOOSE, data={"csrf": csrf, "password": "short", "again": "short"})
    assert short.status_code == 303 and short.headers["location"] == f"{CHOOSE}?failed=rule"
    again = await flow.client.get(short.headers["location"])
    assert again.status_code == 200 and "at least 10" in again.text.lower() and token not in again.text
    form = {"csrf": CSRF.search(again.text).group(1), "password": NEW_PASSWORD, "again": NEW_PASSWORD}
    done = await flow.client.post(CHOOSE, data=form)
    assert done.status_code == 303 and done.headers["location"] == "/oauth/account?done=reset"
    assert await password_works(flow, user, NEW_PASSWORD)
    assert await flow.redis.exists(held) == 0  # spent: no longer held


async def test_a_browser_that_did_not_open_the_link_has_none(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    token = await _a_link(flow, relay, user)
    assert (await flow.client.get(CHOOSE, params={"token": token})).status_code == 303
    async with browser(flow) as other:
        page = await other.client.get(CHOOSE)
        assert page.status_code == 404 and token not in page.text
    assert await flow.pool.fetchval("SELECT used_at FROM authz_account_links") is None


async def test_a_refused_link_is_refused_at_once_and_holds_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    refused = await flow.client.get(CHOOSE, params={"token": "not-a-real-link"})
    assert refused.status_code == 404 and "location" not in refused.headers
    assert "cs_link" not in flow.client.cookies
