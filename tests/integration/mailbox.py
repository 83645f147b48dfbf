"""The authorization server with its mail on (a real SMTP server on loopback, aiosmtpd,
tests/support/smtp.py) and a frozen clock, for the tests of e-mailed links and of the
account page: messages delivered when the test says, read as a mail reader would."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from email.message import EmailMessage
from typing import Any

import httpx
import msgspec

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from ..support.smtp import SmtpRelay, smtp_relay
from .conftest import serve
from .flow import BASE_URL, PASSWORD, Flow

MAIL_FROM = "Course School <no-reply@school.example>"
LINK = re.compile(re.escape(BASE_URL) + r"/oauth/password/choose\?token=([A-Za-z0-9_-]+)")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@asynccontextmanager
async def mailed_app(
    settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock, **more: Any
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    with smtp_relay() as relay:
        changed = {
            "smtp_url": f"smtp+plain://127.0.0.1:{relay.port}",
            "mail_from": MAIL_FROM,
            "mail_interval": 3600.0,  # the test sends each pass itself
            **more,
        }
        app = create_app(AuthzSettings(**{**msgspec.structs.asdict(settings), **changed}), clock=clock)
        async with serve(app) as client:
            yield Flow(client, clean_db, redis_client), relay


def components(flow: Flow) -> Any:
    return flow.client.app.state.authz  # type: ignore[attr-defined]


async def deliver(flow: Flow) -> int:
    """One pass of the mail delivery: how many messages the relay took."""
    return int(await components(flow).mail.deliver_due())


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def link_in(message: EmailMessage) -> str:
    """The token of the single-use link a message carries (the same in both parts)."""
    found = LINK.search(text_of(message))
    assert found, text_of(message)
    html = message.get_body(preferencelist=("html",))
    assert html is not None and found.group(0) in html.get_content()
    return found.group(1)


async def sign_in(flow: Flow, user: dict[str, str], *, password: str = PASSWORD) -> None:
    """The standalone sign-in page, as a browser: a session cookie in the flow's jar."""
    shown = await flow.client.get("/oauth/signin")
    csrf = CSRF.search(shown.text)
    assert csrf
    done = await flow.client.post(
        "/oauth/signin", data={"csrf": csrf.group(1), "email": user["email"], "password": password}
    )
    assert done.status_code == 303 and "cs_session=" in done.headers.get("set-cookie", ""), done.text


async def open_link(flow: Flow, token: str) -> httpx.Response:
    """Open an e-mailed link as a browser does: a usable link's token is held for the
    browser and the answer is a redirect to the page without it, followed here; a refused
    link's page comes back as it is."""
    first = await flow.client.get("/oauth/password/choose", params={"token": token})
    if first.status_code != 303:
        return first
    assert first.headers["location"] == "/oauth/password/choose", first.headers
    return await flow.client.get(first.headers["location"])


async def link_form_token(flow: Flow, token: str) -> str:
    """The CSRF token of the page an e-mailed link opens (which must answer 200)."""
    shown = await open_link(flow, token)
    assert shown.status_code == 200, (shown.status_code, shown.text[:500])
    found = CSRF.search(shown.text)
    assert found, shown.text
    return found.group(1)


async def form_token(flow: Flow, path: str) -> str:
    """The CSRF token of the form on the page at `path` (which must answer 200)."""
    shown = await flow.client.get(path)
    assert shown.status_code == 200, (path, shown.status_code, shown.text[:500])
    found = CSRF.search(shown.text)
    assert found, shown.text
    return found.group(1)
