"""Every sign-in's session records the address and the browser it was opened from (the
account page lists them): the interaction's passkey too, which once recorded nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from courseschool.authz.app import create_app

from .apps_page import FIREFOX_LINUX
from .flow import Flow
from .passkeys import ORIGIN, open_interaction, passkey_form, person_with_passkey, serve_at_localhost, signed_in
from .sign_in import with_settings


@pytest.fixture
async def here(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:  # type: ignore[no-untyped-def]
    settings = with_settings(authz_settings, base_url=ORIGIN, recent_sign_in=300)
    async with serve_at_localhost(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_a_passkey_sign_in_at_an_app_records_where_the_browser_is(here: Flow) -> None:
    _, authenticator = await person_with_passkey(here)
    earlier = {r["id_hash"] for r in await here.pool.fetch("SELECT id_hash FROM authz_login_sessions")}
    reg = await here.register()
    interaction = await open_interaction(here, reg)
    page, _ = await here.page(interaction)
    action, csrf, options = passkey_form(page.text)
    done = await here.client.post(
        action, data={"csrf": csrf, "credential": authenticator.get(options)}, headers={"user-agent": FIREFOX_LINUX}
    )
    assert signed_in(done)
    rows = await here.pool.fetch("SELECT id_hash, created_from, created_agent FROM authz_login_sessions")
    [new] = [r for r in rows if r["id_hash"] not in earlier]  # the passkey's (one clock second: auth_time ties)
    assert (new["created_from"], new["created_agent"]) == ("127.0.0.1", "Firefox on Linux"), rows
