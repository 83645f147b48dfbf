"""A passkey set up during sign-in (the school requires two-step sign-in and the person
had no second factor) is told by e-mail, as one added on the security page is: the
interaction's and the standalone sign-in's. A refused answer sets nothing up and tells
nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from ..support.smtp import SmtpRelay, smtp_relay
from ..support.soft_authenticator import SoftAuthenticator
from .apps_page import FIREFOX_LINUX
from .flow import Flow, csrf_of, pkce_pair
from .mailbox import MAIL_FROM, deliver, text_of
from .passkeys import ORIGIN, browser, passkey_form, serve_at_localhost, sign_in_with_password, signed_in
from .test_school_requires_two_step import require

TOLD = "A passkey was added to your Course School account"


@pytest.fixture
async def mailed_here(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    with smtp_relay() as relay:
        changed = {
            "base_url": ORIGIN,
            "smtp_url": f"smtp+plain://127.0.0.1:{relay.port}",
            "mail_from": MAIL_FROM,
            "mail_interval": 3600.0,  # the test sends each pass itself
        }
        settings = AuthzSettings(**{**msgspec.structs.asdict(authz_settings), **changed})
        async with serve_at_localhost(create_app(settings, clock=clock)) as client:
            yield Flow(client, clean_db, redis_client), relay


async def _required_of(flow: Flow) -> dict[str, str]:
    """An owner of a school that requires two-step sign-in of its staff, with no second factor."""
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await sign_in_with_password(settings, owner, "/oauth/school/security")
        await require(settings, "staff")
    await deliver(flow)
    return owner


async def test_a_passkey_set_up_at_an_apps_sign_in_is_told(mailed_here: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed_here
    owner = await _required_of(flow)
    before = len(relay.accepted)
    reg = await flow.register()
    _, challenge = pkce_pair()
    interaction = str((await flow.start(flow.authorize_params(reg, challenge))).headers["location"])
    assert not signed_in(await flow.login(interaction, owner))
    key = SoftAuthenticator(ORIGIN)
    action, csrf, options = passkey_form((await flow.client.get(interaction)).text)
    refused = key.create(options, origin="http://evil.localhost:8000")
    assert not signed_in(await flow.client.post(action, data={"csrf": csrf, "name": "x", "credential": refused}))
    assert await deliver(flow) == 0
    action, csrf, options = passkey_form((await flow.client.get(interaction)).text)
    done = await flow.client.post(
        action,
        data={"csrf": csrf, "name": "Work phone", "credential": key.create(options)},
        headers={"user-agent": FIREFOX_LINUX},
    )
    assert signed_in(done)
    assert await deliver(flow) == 1
    told = relay.accepted[before].message
    assert told["Subject"] == TOLD and owner["email"] in told["To"]
    assert "Firefox on Linux" in text_of(told) and "127.0.0.1" in text_of(told)


async def test_a_passkey_set_up_at_the_standalone_sign_in_is_told(mailed_here: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed_here
    owner = await _required_of(flow)
    before = len(relay.accepted)
    shown = await flow.client.get("/oauth/signin", params={"next": "/oauth/apps"})
    fields = {"email": owner["email"], "password": owner["password"], "next": "/oauth/apps"}
    first = await flow.client.post("/oauth/signin", data={"csrf": csrf_of(shown.text), **fields})
    action, csrf, options = passkey_form((await flow.client.get(first.headers["location"])).text)
    done = await flow.client.post(
        action, data={"csrf": csrf, "name": "Laptop", "credential": SoftAuthenticator(ORIGIN).create(options)}
    )
    assert signed_in(done) and done.headers["location"].startswith("/oauth/security/codes")
    assert await deliver(flow) == 1
    assert relay.accepted[before].message["Subject"] == TOLD
