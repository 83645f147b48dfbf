"""Issue 40: the sign-in limits cover passkeys as they cover passwords and codes: every
passkey attempt counts in the per-address rate, and passkeys of nobody's (an attacker
trying credentials) count in the address's lockout, which then refuses even a right one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from courseschool.authz.app import create_app

from ..support.soft_authenticator import SoftAuthenticator
from .flow import Flow
from .passkeys import ORIGIN, browser, events, passkey_form, person_with_passkey, serve_at_localhost, signed_in
from .sign_in import with_settings
from .test_metrics import _value


@pytest.fixture
async def strict(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:  # type: ignore[no-untyped-def]
    settings = with_settings(authz_settings, base_url=ORIGIN, login_source_threshold=3, rate_login_per_ip="8/300")
    async with serve_at_localhost(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def attempt(flow: Flow, authenticator: SoftAuthenticator, address: str) -> str:
    """One sign-in with a passkey alone, from a new browser at `address`: "signed in",
    "refused" (back to the page, which says so) or "429"."""
    async with browser(flow, address) as new:
        page = await new.client.get("/oauth/signin")
        action, csrf, options = passkey_form(page.text)
        done = await new.client.post(action, data={"csrf": csrf, "credential": authenticator.get(options)})
    if done.status_code != 303:
        return str(done.status_code)
    return "signed in" if signed_in(done) else "refused"


async def test_passkeys_of_nobody_lock_the_address_out_even_for_a_right_one(strict: Flow) -> None:
    _, key = await person_with_passkey(strict)
    stranger = SoftAuthenticator(ORIGIN)
    stranger.create({"rp": {"id": "localhost"}, "user": {"id": "AAAA"}, "challenge": "AAAA"})  # never registered
    before = (await strict.client.get("/metrics")).text
    assert [await attempt(strict, stranger, "192.0.2.7") for _ in range(3)] == ["refused"] * 3
    assert await attempt(strict, key, "192.0.2.7") == "429"  # the right passkey, from that address
    assert await attempt(strict, key, "192.0.2.8") == "signed in"  # another address is not locked out
    # Failures that concern no account are anonymous noise: counted, never stored (issue 38, T4-3).
    after = (await strict.client.get("/metrics")).text
    counted = [_value(text, "courseschool_anonymous_events_total", action="login_failed") for text in (before, after)]
    assert counted[1] - counted[0] == 3
    assert [e for e in await events(strict, "login_failed") if e.get("factor") == "passkey"] == []
    assert any(e["rule"] == "address" for e in await events(strict, "account_locked"))


async def test_passkey_attempts_count_in_the_per_address_rate(strict: Flow) -> None:
    _, key = await person_with_passkey(strict)  # one password sign-in from 127.0.0.1
    answers = [await attempt(strict, key, "198.51.100.4") for _ in range(9)]
    assert answers == ["signed in"] * 8 + ["429"]
