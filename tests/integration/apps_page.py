"""The connected-apps page as a person's browser uses it: its own cookie jar and
address, the list read from the page's HTML, the forms posted with the page's token."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from .flow import BASE_URL, Flow

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
SIGN_IN = re.compile(r'<li class="sign-in" id="sign-in-([^"]+)">')
FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Safari/605.1.15"
)


@asynccontextmanager
async def browser(flow: Flow, address: str = "127.0.0.1", agent: str | None = None) -> AsyncIterator[Flow]:
    """Another browser (its own cookies) at `address`, saying it is `agent`, on the same running app."""
    app = flow.client.app  # type: ignore[attr-defined]
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    headers = {"User-Agent": agent} if agent else None
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, headers=headers) as client:
        client.app = app  # type: ignore[attr-defined]
        yield Flow(client, flow.pool, flow.redis)


async def approve(flow: Flow, user: dict[str, str], reg: dict[str, Any] | None = None, **extra: str) -> dict:
    """Register (unless given) and approve an app; its registration, tokens and grant id."""
    reg = reg or await flow.register(**extra)
    tokens = await flow.tokens(reg, user)
    grant_id = await flow.pool.fetchval(
        "SELECT id::text FROM authz_grants WHERE client_id = $1 ORDER BY created_at DESC, id LIMIT 1", reg["client_id"]
    )
    return {"reg": reg, "tokens": tokens, "grant_id": grant_id}


async def page(flow: Flow) -> tuple[httpx.Response, str]:
    """The page (200) and its forms' CSRF token (the forms are on its confirmation pages:
    the token is the session's, the same on each; "" when signed out)."""
    response = await flow.client.get("/oauth/apps")
    assert response.status_code == 200, response.text
    confirm = await flow.client.get("/oauth/apps/remove-all")
    match = CSRF.search(confirm.text) if confirm.status_code == 200 else None
    return response, match.group(1) if match else ""


def rows(html: str) -> dict[str, str]:
    """Grant id -> the HTML of its sign-in, preceded by its app's card head (the last
    one runs on to the page's end)."""
    out = {}
    for card in html.split('<li class="app"')[1:]:
        head, *sign_ins = card.split('<li class="sign-in"')
        for one in sign_ins:
            one = '<li class="sign-in"' + one
            grant = SIGN_IN.match(one)
            assert grant, one
            out[grant.group(1)] = '<li class="app"' + head + one
    return out


def cards(html: str) -> list[dict[str, str]]:
    """Each app's card: grant id -> its sign-in's HTML, in the page's order."""
    out = []
    for card in html.split('<li class="app"')[1:]:
        out.append({gid: row for gid, row in rows('<li class="app"' + card).items()})
    return out


def text(html: str) -> str:
    """What a person reads: tags gone, spaces collapsed, none before a full stop or comma."""
    return re.sub(r" ([.,])", r"\1", " ".join(re.sub(r"<[^>]+>", " ", html).split()))


async def remove(flow: Flow, grant_id: str, csrf: str | None = None) -> httpx.Response:
    """End one sign-in, as its confirmation page's form does."""
    if csrf is None:
        _, csrf = await page(flow)
    return await flow.client.post(f"/oauth/apps/{grant_id}/remove", data={"csrf": csrf})


async def confirmed(flow: Flow, grant_id: str, action: str) -> httpx.Response:
    """Follow the page's link to a confirmation page (`end` or `remove-app`) and post its form."""
    listed = (await page(flow))[0].text
    link = f'href="/oauth/apps/{grant_id}/{action}"'
    assert link in listed, link
    confirm = await flow.client.get(f"/oauth/apps/{grant_id}/{action}")
    assert confirm.status_code == 200, confirm.text
    target = "remove" if action == "end" else "remove-app"
    assert f'action="/oauth/apps/{grant_id}/{target}"' in confirm.text
    csrf = CSRF.search(confirm.text)
    assert csrf
    return await flow.client.post(f"/oauth/apps/{grant_id}/{target}", data={"csrf": csrf.group(1)})


async def live(flow: Flow, grant_id: str) -> bool:
    return await flow.pool.fetchval("SELECT revoked_at IS NULL FROM authz_grants WHERE id = $1::uuid", grant_id)
