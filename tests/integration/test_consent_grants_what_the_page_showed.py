"""An approval grants at most what its consent page showed. The interaction keeps the
scopes its page listed; the decision grants their intersection with what is grantable
at that moment, so a change between the page and the click (the client widening its
own registered `scope` through RFC 7592, or the person's role being raised) can only
narrow the grant, never widen it."""

from __future__ import annotations

from typing import Any

from courseschool.authz.endpoints.admin import AdminService
from courseschool.common.scopes import format_scope

from .flow import REDIRECT_URI, Flow, csrf_of, pkce_pair, query_of

WIDE = "openid courses:read courses:write school:write students:write members:write"


async def _open_consent_page(
    flow: Flow, reg: dict[str, Any], user: dict[str, str], scope: str | None
) -> tuple[str, str]:
    """Authorize (without `scope` when None: the client's default), sign in, and show the
    consent page once; (the interaction path, the page's text)."""
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge)
    if scope is None:
        del params["scope"]
    else:
        params["scope"] = scope
    start = await flow.start(params)
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    assert (await flow.login(interaction, user)).status_code == 303
    page, _ = await flow.page(interaction)
    assert page.status_code == 200, page.text
    return interaction, page.text


async def _approve(flow: Flow, interaction: str, page: str) -> dict[str, str]:
    """Allow on the page as it was shown (not rendered again: the person clicks what they saw)."""
    final = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "approve"})
    assert final.status_code == 303, final.text
    return query_of(final.headers["location"])


async def _granted_scope(flow: Flow, reg: dict[str, Any]) -> str:
    return await flow.pool.fetchval("SELECT scope FROM authz_grants WHERE client_id = $1", reg["client_id"])


async def test_a_self_registered_clients_scope_is_a_default_not_a_ceiling(flow: Flow) -> None:
    """RFC 6749 §3.3 / INTERFACE: the MCP SDKs register with the scope they chose first
    and ask for more later; the person decides on the page, within their role."""
    reg = await flow.register(client_name="Growing CLI", scope="openid courses:read")
    owner = await flow.user("owner")
    interaction, text = await _open_consent_page(flow, reg, owner, WIDE)
    assert "beyond what the app registered" not in text
    assert "code" in await _approve(flow, interaction, text)
    assert await _granted_scope(flow, reg) == format_scope(WIDE.split())


async def test_a_registration_widened_while_the_page_is_open_grants_only_what_the_page_showed(flow: Flow) -> None:
    """The request asks for the registered default; the client widens its registration
    (RFC 7592) while the page is open: the approval grants what the page showed."""
    reg = await flow.register(client_name="Narrow CLI", scope="openid courses:read")
    owner = await flow.user("owner")
    interaction, text = await _open_consent_page(flow, reg, owner, None)
    assert "change" not in text.split("It will be able to", 1)[1].split("Deny", 1)[0].lower()
    widened = await flow.client.put(
        reg["registration_client_uri"].removeprefix("http://127.0.0.1:8000"),
        headers={"Authorization": f"Bearer {reg['registration_access_token']}"},
        json={"client_id": reg["client_id"], "redirect_uris": [REDIRECT_URI], "scope": WIDE},
    )
    assert widened.status_code == 200, widened.text
    callback = await _approve(flow, interaction, text)
    assert "code" in callback, callback
    assert await _granted_scope(flow, reg) == "openid courses:read"


async def test_a_role_raised_while_the_page_is_open_grants_only_what_the_page_showed(flow: Flow) -> None:
    reg = await flow.register(client_name="Role CLI")
    student = await flow.user("student")
    interaction, text = await _open_consent_page(flow, reg, student, "openid account:read courses:write")
    assert "Not granted: beyond your role" in text
    admin = AdminService(flow.client.app.state.authz.administration)  # type: ignore[attr-defined]
    await admin.set_role(student["email"], "owner")
    await _approve(flow, interaction, text)
    assert await _granted_scope(flow, reg) == "openid account:read"


async def test_a_role_lowered_while_the_page_is_open_narrows_the_grant(flow: Flow) -> None:
    reg = await flow.register(client_name="Demoted CLI")
    owner = await flow.user("owner")
    interaction, text = await _open_consent_page(flow, reg, owner, "openid courses:read courses:write")
    admin = AdminService(flow.client.app.state.authz.administration)  # type: ignore[attr-defined]
    await admin.set_role(owner["email"], "student")
    await _approve(flow, interaction, text)
    assert await _granted_scope(flow, reg) == "openid"  # a student may grant neither courses scope


async def test_a_decision_without_the_page_ever_shown_grants_nothing(flow: Flow) -> None:
    reg = await flow.register(client_name="Blind CLI")
    owner = await flow.user("owner")
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    login_page, csrf = await flow.page(interaction)  # the sign-in form, not the consent page
    assert 'action="' + interaction + '/login"' in login_page.text
    await flow.client.post(
        f"{interaction}/login", data={"csrf": csrf, "email": owner["email"], "password": owner["password"]}
    )
    blind = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert blind.status_code == 400, blind.text
    assert "consent page" in blind.text
    assert await flow.count("authz_grants") == 0 and await flow.count("authz_codes") == 0
