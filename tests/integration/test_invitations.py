"""Issue 40: `admin users invite` makes a person without a password and e-mails them a
single-use link (INVITATION_TTL) where they choose one and are signed in; until then no
password signs them in. Inviting again someone who has not chosen one sends a new link
(the earlier one stops working); someone with a password is not invited over. And the
administrator's reset of second factors ends the person's sessions and tells them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.passwords import NO_PASSWORD
from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock
from courseschool.common.errors import ConflictError

from ..support.smtp import SmtpRelay
from .admin_api import admin_post, with_admin
from .apps_page import browser
from .flow import PASSWORD, Flow
from .mailbox import components, deliver, form_token, link_in, mailed_app, open_link, sign_in, text_of

CHOSEN = "my first passphrase"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(authz_settings, clean_db, redis_client, clock) as running:
        yield running


def admin(flow: Flow) -> AdminService:
    return AdminService(components(flow).administration, actor="admin-cli", source="tester@host")


async def signs_in(flow: Flow, email: str, password: str) -> bool:
    async with browser(flow) as other:
        csrf = await form_token(other, "/oauth/signin")
        done = await other.client.post("/oauth/signin", data={"csrf": csrf, "email": email, "password": password})
        return "cs_session=" in done.headers.get("set-cookie", "")


async def test_an_invitation_link_sets_a_password_and_signs_in(
    mailed: tuple[Flow, SmtpRelay], clock: FrozenClock
) -> None:
    flow, relay = mailed
    await flow.school("riverside")
    invited = await admin(flow).invite_user(
        school="riverside", email="new.teacher@example.test", name="New Teacher", role="lecturer"
    )
    assert invited["email"] == "new.teacher@example.test" and "password" not in invited
    assert invited["invitation"] == "queued for e-mail"
    assert await flow.pool.fetchval("SELECT password_hash FROM authz_users WHERE id = $1::uuid", invited["id"]) == (
        NO_PASSWORD
    )
    assert not await signs_in(flow, "new.teacher@example.test", NO_PASSWORD)
    assert await flow.pool.fetchval("SELECT action FROM authz_events WHERE action = 'user_invited'") == "user_invited"

    assert await deliver(flow) == 1
    message = relay.accepted[0].message
    assert message["Subject"] == "You are invited to Riverside School on Course School"
    assert "Hello New Teacher" in text_of(message)
    token = link_in(message)
    async with browser(flow) as newcomer:
        shown = await open_link(newcomer, token)
        assert shown.status_code == 200 and "Choose your password" in shown.text
        csrf = shown.text.split('name="csrf" value="')[1].split('"')[0]
        done = await newcomer.client.post(
            "/oauth/password/choose", data={"csrf": csrf, "token": token, "password": CHOSEN, "again": CHOSEN}
        )
        assert done.status_code == 303 and done.headers["location"] == "/oauth/account?done=welcome"
        welcome = await newcomer.client.get(done.headers["location"])
        assert welcome.status_code == 200 and "Welcome to Course School" in welcome.text
    assert await signs_in(flow, "new.teacher@example.test", CHOSEN)
    with pytest.raises(ConflictError):  # a password chosen: not invited over
        await admin(flow).invite_user(school="riverside", email="new.teacher@example.test", name="X", role="student")


async def test_inviting_again_sends_a_new_link_and_the_first_stops_working(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    await flow.school("riverside")
    for _ in range(2):
        await admin(flow).invite_user(school="riverside", email="late@example.test", name="Late", role="student")
    assert await flow.count("authz_users") == 1
    assert await deliver(flow) == 2
    first, second = (link_in(a.message) for a in relay.accepted)
    assert (await open_link(flow, first)).status_code == 410
    assert (await open_link(flow, second)).status_code == 200


async def test_an_invitation_expires_after_its_time(mailed: tuple[Flow, SmtpRelay], clock: FrozenClock) -> None:
    flow, relay = mailed
    await flow.school("riverside")
    await admin(flow).invite_user(school="riverside", email="slow@example.test", name="Slow", role="student")
    assert await deliver(flow) == 1
    token = link_in(relay.accepted[0].message)
    clock.advance(48 * 3600 - 1)
    assert (await open_link(flow, token)).status_code == 200
    clock.advance(1)
    expired = await open_link(flow, token)
    assert expired.status_code == 410 and "This link has expired" in expired.text


async def test_a_reset_of_second_factors_ends_sessions_and_tells_the_person(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    await sign_in(flow, user)
    assert (await flow.client.get("/oauth/account")).status_code == 200
    reset = await admin(flow).reset_second_factors(user["email"])
    assert reset["sessions_ended"] is True
    assert (await flow.client.get("/oauth/account")).status_code == 303  # signed out
    assert await deliver(flow) == 1
    told = relay.accepted[0].message
    assert told["Subject"] == "An administrator reset your Course School account's two-step sign-in"
    assert await signs_in(flow, user["email"], PASSWORD)


async def test_the_admin_api_invites_too(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> None:
    async with mailed_app(with_admin(authz_settings), clean_db, redis_client, clock) as (flow, relay):
        await flow.school("riverside")
        body = {"school": "riverside", "email": "api.invite@example.test", "name": "Api Invite", "role": "student"}
        invited = await admin_post(flow.client, "/invitations", body)
        assert invited["email"] == "api.invite@example.test" and "invited_until" in invited
        refused = await flow.client.post("/internal/admin/invitations", json=body)  # no credential
        assert refused.status_code == 401
        assert await deliver(flow) == 1
        assert link_in(relay.accepted[0].message)
