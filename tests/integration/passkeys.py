"""Passkeys as a person's browser uses them, on an authorization server whose public
origin is http://localhost:8000 (WebAuthn needs a host name; http is a secure context
only on localhost): the pages' options read from their HTML, the answers made by the
software authenticator of tests/support/soft_authenticator.py, the forms posted with
the pages' tokens."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from litestar import Litestar

from courseschool.common.asgi import AppLifespan

from ..support.soft_authenticator import SoftAuthenticator, options_of
from .conftest import AppClient
from .flow import PASSWORD, Flow, csrf_of, pkce_pair

ORIGIN = "http://localhost:8000"
FIRST_ADDED = "/oauth/security/codes?new=passkey"  # a first second factor: its recovery codes, once
PASSKEY_FORM = re.compile(r'<form method="post" action="([^"]+)" class="passkey-form"')


@asynccontextmanager
async def serve_at_localhost(app: Litestar) -> AsyncIterator[AppClient]:
    async with AppLifespan(app):
        async with AppClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
            client.app = app
            yield client


@asynccontextmanager
async def browser(flow: Flow, address: str = "127.0.0.1") -> AsyncIterator[Flow]:
    """Another browser (its own cookies) on the same app."""
    app = flow.client.app  # type: ignore[attr-defined]
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with AppClient(transport=transport, base_url=ORIGIN) as client:
        client.app = app
        yield Flow(client, flow.pool, flow.redis)


def passkey_form(page: str) -> tuple[str, str, dict[str, Any]]:
    """The passkey form of a page: where it posts, its token, the WebAuthn options."""
    start = page.index('class="passkey-form"')
    form = page[page.rindex("<form", 0, start) : page.index("</form>", start)]
    action = PASSKEY_FORM.search(form)
    assert action, form
    return action.group(1).replace("&amp;", "&"), csrf_of(form), options_of(form)


async def sign_in_with_password(flow: Flow, user: dict[str, str], next_page: str = "/oauth/security") -> None:
    shown = await flow.client.get("/oauth/signin", params={"next": next_page})
    done = await flow.client.post(
        "/oauth/signin",
        data={"csrf": csrf_of(shown.text), "email": user["email"], "password": PASSWORD, "next": next_page},
    )
    assert done.status_code == 303 and done.headers["location"] == next_page, done.text


async def add_passkey(flow: Flow, authenticator: SoftAuthenticator, name: str = "Laptop", **bad: Any) -> httpx.Response:
    """On the signed-in person's security page: add a passkey (the answer made with `bad`'s changes)."""
    page = await flow.client.get("/oauth/security/passkeys/new")
    assert page.status_code == 200, page.text
    action, csrf, options = passkey_form(page.text)
    answer = authenticator.create(options, **bad)
    return await flow.client.post(action, data={"csrf": csrf, "name": name, "credential": answer})


async def person_with_passkey(flow: Flow, role: str = "owner") -> tuple[dict[str, str], SoftAuthenticator]:
    """A person who added a passkey in their own browser (then left it)."""
    user = await flow.user(role)
    authenticator = SoftAuthenticator(ORIGIN)
    async with browser(flow) as own:
        await sign_in_with_password(own, user)
        added = await add_passkey(own, authenticator)
        assert added.status_code == 303 and added.headers["location"] == FIRST_ADDED
    return user, authenticator


async def open_interaction(flow: Flow, reg: dict[str, Any]) -> str:
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    assert start.status_code == 303, start.text
    return str(start.headers["location"])


async def passkeys_of(flow: Flow, user: dict[str, str]) -> list[dict[str, Any]]:
    rows = await flow.pool.fetch(
        "SELECT id::text, name, sign_count FROM authz_passkeys WHERE user_id = $1::uuid ORDER BY created_at",
        user["id"],
    )
    return [dict(r) for r in rows]


async def events(flow: Flow, action: str) -> list[dict[str, Any]]:
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    rows = await flow.pool.fetch(
        "SELECT subject::text, details FROM authz_events WHERE action = $1 ORDER BY id", action
    )
    return [{"subject": r["subject"], **(r["details"] or {})} for r in rows]


async def sessions(flow: Flow) -> int:
    return await flow.count("authz_login_sessions WHERE ended_at IS NULL")


def signed_in(response: httpx.Response) -> bool:
    return response.status_code == 303 and "cs_session=" in response.headers.get("set-cookie", "")
