"""A notice of each new connection: the next page of ours a person opens in another
sign-in session (another device, or later) says once which app was connected, when and
from which address, with the way to remove it. The browser that approved it is not told
of its own approval; an approval whose code was never exchanged, or that was ended
since, is no connection to tell of."""

from __future__ import annotations

from typing import Any

from .flow import Flow, pkce_pair


async def _consent_page_as_another_device(flow: Flow, user: dict[str, str]) -> str:
    """A fresh browser signs in for another app and reads its consent page."""
    flow.client.cookies.clear()
    other = await flow.register(client_name="Second device app")
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(other, challenge))
    interaction = start.headers["location"]
    assert (await flow.login(interaction, user)).status_code == 303
    page, _ = await flow.page(interaction)
    assert page.status_code == 200
    return page.text


async def _connect(flow: Flow, user: dict[str, str], name: str) -> dict[str, Any]:
    flow.client.cookies.clear()
    reg = await flow.register(client_name=name)
    await flow.tokens(reg, user)
    return reg


async def test_another_session_is_told_once_which_app_when_and_from_where(flow: Flow) -> None:
    user = await flow.user("owner")
    await _connect(flow, user, "Laptop Agent")
    told = await _consent_page_as_another_device(flow, user)
    assert "A new app was connected to your account" in told
    assert "Laptop Agent" in told and "from 127.0.0.1" in told and "UTC</time>" in told
    assert 'href="/oauth/apps"' in told
    again, _ = await flow.page(await _reopen(flow))
    assert "connected to your account" not in again.text  # told once


async def _reopen(flow: Flow) -> str:
    """The same browser opens a new consent page (its session stays)."""
    reg = await flow.register(client_name="Third app")
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    return start.headers["location"]


async def test_the_approving_session_is_not_told_of_its_own_approval(flow: Flow) -> None:
    user = await flow.user("owner")
    reg = await flow.register(client_name="Own Approval")
    await flow.tokens(reg, user)  # this browser approved it and keeps its session
    page, _ = await flow.page(await _reopen(flow))
    assert "connected to your account" not in page.text
    assert await flow.count("authz_notices WHERE seen_at IS NULL") == 1  # still owed to other sessions


async def test_no_notice_of_an_approval_never_exchanged_or_ended(flow: Flow) -> None:
    user = await flow.user("owner")
    flow.client.cookies.clear()
    unexchanged = await flow.register(client_name="Never Exchanged")
    await flow.authorize(unexchanged, user)
    ended = await _connect(flow, user, "Ended Already")
    await flow.pool.execute("UPDATE authz_grants SET revoked_at = now() WHERE client_id = $1", ended["client_id"])
    text = await _consent_page_as_another_device(flow, user)
    assert "connected to your account" not in text


async def test_another_persons_connection_is_not_told(flow: Flow) -> None:
    someone = await flow.user("owner")
    await _connect(flow, someone, "Someone Else's")
    me = await flow.user("owner")
    text = await _consent_page_as_another_device(flow, me)
    assert "connected to your account" not in text and "Someone Else" not in text


async def test_a_new_sign_in_of_a_connected_app_names_the_device(flow: Flow) -> None:
    """An app already connected elsewhere, approved again in another browser, is a new
    sign-in of it, not a new app; the notice names the browser it came from."""
    user = await flow.user("owner")
    reg = await _connect(flow, user, "Laptop Agent")
    flow.client.cookies.clear()
    flow.client.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
    await flow.tokens(reg, user)  # its pages told this browser of the first connection
    told = await _consent_page_as_another_device(flow, user)
    assert "A new sign-in of an app connected to your account" in told
    assert "A new app was connected" not in told
    assert "A new sign-in of <strong>«<bdi>Laptop Agent</bdi>»</strong> on Firefox on Linux, on" in told
