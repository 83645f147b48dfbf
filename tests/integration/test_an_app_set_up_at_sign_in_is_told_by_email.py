"""An authenticator app set up during sign-in (the school requires two-step sign-in and
the person had none) is told by e-mail, as one set up on the security page is: the
interaction's and the standalone sign-in's. A wrong code sets nothing up and tells
nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pyotp
import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from ..support.smtp import SmtpRelay
from .apps_page import FIREFOX_LINUX, browser
from .flow import Flow, csrf_of, pkce_pair
from .mailbox import deliver, mailed_app, text_of
from .test_school_requires_two_step import PAGE, require
from .test_two_step_sign_in import SECRET, standalone_sign_in

TOLD = "Two-step sign-in was turned on for your Course School account"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(authz_settings, clean_db, redis_client, clock) as running:
        yield running


async def _required_of(flow: Flow) -> dict[str, str]:
    """An owner of a school that requires two-step sign-in of its staff, with no second factor."""
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await standalone_sign_in(settings, owner, PAGE)
        await require(settings, "staff")
    await deliver(flow)
    return owner


async def test_an_app_set_up_at_an_apps_sign_in_is_told(mailed: tuple[Flow, SmtpRelay], clock: FrozenClock) -> None:
    flow, relay = mailed
    owner = await _required_of(flow)
    before = len(relay.accepted)
    reg = await flow.register()
    _, challenge = pkce_pair()
    interaction = (await flow.start(flow.authorize_params(reg, challenge))).headers["location"]
    await flow.login(interaction, owner)
    page, csrf = await flow.page(interaction)
    secret = SECRET.search(page.text).group(1).replace(" ", "")  # type: ignore[union-attr]
    wrong = await flow.client.post(f"{interaction}/second-step", data={"csrf": csrf, "code": "000000x"})
    assert wrong.status_code == 303 and await deliver(flow) == 0
    code = pyotp.TOTP(secret).at(clock.now())
    done = await flow.client.post(
        f"{interaction}/second-step", data={"csrf": csrf, "code": code}, headers={"user-agent": FIREFOX_LINUX}
    )
    assert "cs_session=" in done.headers["set-cookie"]
    assert await deliver(flow) == 1
    told = relay.accepted[before].message
    assert told["Subject"] == TOLD and owner["email"] in told["To"]
    assert "Firefox on Linux" in text_of(told) and "127.0.0.1" in text_of(told)


async def test_an_app_set_up_at_the_standalone_sign_in_is_told(
    mailed: tuple[Flow, SmtpRelay], clock: FrozenClock
) -> None:
    flow, relay = mailed
    owner = await _required_of(flow)
    before = len(relay.accepted)
    first = await standalone_sign_in(flow, owner, "/oauth/apps")
    step = first.headers["location"]
    page = await flow.client.get(step)
    secret = SECRET.search(page.text).group(1).replace(" ", "")  # type: ignore[union-attr]
    done = await flow.client.post(step, data={"csrf": csrf_of(page.text), "code": pyotp.TOTP(secret).at(clock.now())})
    assert done.headers["location"].startswith("/oauth/security/codes")
    assert await deliver(flow) == 1
    assert relay.accepted[before].message["Subject"] == TOLD
