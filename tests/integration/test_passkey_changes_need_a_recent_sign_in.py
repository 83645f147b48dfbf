"""Issue 40: a passkey added, renamed or removed is a change of the account like a new
password: it needs a recent sign-in (RECENT_SIGN_IN; without one the answer is the
confirmation page and nothing changes) and is told to the person by e-mail."""

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
from .flow import Flow, csrf_of
from .mailbox import MAIL_FROM, deliver
from .passkeys import FIRST_ADDED, ORIGIN, add_passkey, passkeys_of, serve_at_localhost, sign_in_with_password

RECENT = 300


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
            "recent_sign_in": RECENT,
        }
        settings = AuthzSettings(**{**msgspec.structs.asdict(authz_settings), **changed})
        async with serve_at_localhost(create_app(settings, clock=clock)) as client:
            yield Flow(client, clean_db, redis_client), relay


async def test_passkey_changes_ask_for_a_recent_sign_in_and_are_told(
    mailed_here: tuple[Flow, SmtpRelay], clock: FrozenClock
) -> None:
    flow, relay = mailed_here
    user = await flow.user("owner")
    await sign_in_with_password(flow, user)
    added = await add_passkey(flow, SoftAuthenticator(ORIGIN), name="Laptop")
    assert added.headers["location"] == FIRST_ADDED
    [key] = await passkeys_of(flow, user)
    remove_page = await flow.client.get(f"/oauth/security/passkeys/{key['id']}/remove")
    csrf = csrf_of(remove_page.text)

    clock.advance(RECENT + 1)
    adding = await flow.client.get("/oauth/security/passkeys/new")
    assert adding.status_code == 303
    assert adding.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fsecurity%2Fpasskeys%2Fnew"
    removing = await flow.client.post(f"/oauth/security/passkeys/{key['id']}/remove", data={"csrf": csrf})
    assert removing.status_code == 303
    assert removing.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fsecurity"
    renaming = await flow.client.post(f"/oauth/security/passkeys/{key['id']}/rename", data={"csrf": csrf, "name": "X"})
    assert renaming.headers["location"].startswith("/oauth/account/confirm?")
    assert [k["name"] for k in await passkeys_of(flow, user)] == ["Laptop"]  # nothing changed

    confirm = await flow.client.get(removing.headers["location"])
    right = await flow.client.post(
        "/oauth/account/confirm",
        data={"csrf": csrf_of(confirm.text), "password": user["password"], "next": "/oauth/security"},
    )
    assert right.status_code == 303 and right.headers["location"] == "/oauth/security"
    removed = await flow.client.post(f"/oauth/security/passkeys/{key['id']}/remove", data={"csrf": csrf})
    assert removed.headers["location"] == "/oauth/security?done=passkey-removed"
    assert await passkeys_of(flow, user) == []

    assert await deliver(flow) == 2
    assert [m.message["Subject"] for m in relay.accepted] == [
        "A passkey was added to your Course School account",
        "A passkey was removed from your Course School account",
    ]
    assert all(m.rcpt_tos == [user["email"]] for m in relay.accepted)
