"""Consent the person can trim: each area line of the consent page can be unticked
(whole, or its change part); what is unticked is not granted, and the token's `scope`
says what was (RFC 6749 §3.3). A form that names what its page did not offer is a
tampered form: refused, nothing granted, the interaction still open."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.common.scopes import ALL_SCOPE_NAMES

from .api_env import ApiEnv
from .flow import Flow, csrf_of, pkce_pair, query_of

EVERY_SCOPE = " ".join(ALL_SCOPE_NAMES)  # what an MCP client asks for


@pytest.fixture
async def env(open_api_env: Any) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


async def _consent_page(flow: Flow, reg: dict[str, Any], user: dict[str, str], scope: str) -> tuple[str, str, str]:
    """(interaction path, the consent page's text, the PKCE verifier)."""
    verifier, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope=scope))
    interaction = start.headers["location"]
    assert (await flow.login(interaction, user)).status_code == 303
    page, _ = await flow.page(interaction)
    assert page.status_code == 200, page.text
    return interaction, page.text, verifier


def _every_line_ticked(page: str) -> list[tuple[str, str]]:
    """The choices as the page sends them: every box it shows, ticked (and the hidden
    field beside each change part)."""
    pattern = r'name="(keep|keep_changes|has_changes)" value="([^"]+)"'
    return [(name, value) for name, value in re.findall(pattern, page)]


async def _submit(flow: Flow, interaction: str, page: str, choices: list[tuple[str, str]]) -> Any:
    form: dict[str, Any] = {"csrf": csrf_of(page), "choices": "1", "decision": "approve"}
    for name in ("keep", "keep_changes", "has_changes"):
        form[name] = [value for field, value in choices if field == name]
    return await flow.client.post(f"{interaction}/consent", data=form)


async def test_unticked_areas_are_not_granted_and_the_api_refuses_them(env: ApiEnv) -> None:
    flow = env.flow
    owner = await flow.user("owner", school=await env.school("acme"))
    reg = await flow.register(client_name="Every Scope Agent")
    interaction, page, verifier = await _consent_page(flow, reg, owner, EVERY_SCOPE)
    # One line at the top says how much it asks to change, and in which school.
    assert "It asks to change almost everything" in page and "Acme School" in page
    choices = _every_line_ticked(page)
    assert ("keep", "students:read students:write") in choices and ("keep_changes", "courses:write") in choices
    # The person unticks students whole, and the change part of courses.
    trimmed = [
        c for c in choices if c not in {("keep", "students:read students:write"), ("keep_changes", "students:write")}
    ]
    trimmed.remove(("keep_changes", "courses:write"))
    final = await _submit(flow, interaction, page, trimmed)
    assert final.status_code == 303, final.text
    callback = query_of(final.headers["location"])
    exchanged = await flow.exchange(reg, callback["code"], verifier)
    assert exchanged.status_code == 200, exchanged.text
    granted = set(exchanged.json()["scope"].split())
    assert set(ALL_SCOPE_NAMES) - granted == {"students:read", "students:write", "courses:write"}
    token = exchanged.json()["access_token"]
    read = await env.api.get("/api/v1/courses", headers=env.bearer(token))
    assert read.status_code == 200
    for method, path, scope in (
        ("GET", "/api/v1/students", "students:read"),
        ("POST", "/api/v1/courses", "courses:write"),
    ):
        refused = await env.api.request(method, path, headers=env.bearer(token), json={"title": "x"})
        assert refused.status_code == 403, (path, refused.text)
        assert refused.json()["error"] == "insufficient_scope"
        assert f'scope="{scope}"' in refused.headers["www-authenticate"]


async def test_every_line_ticked_grants_what_the_page_showed(flow: Flow) -> None:
    owner = await flow.user("lecturer")
    reg = await flow.register()
    interaction, page, verifier = await _consent_page(flow, reg, owner, "openid profile courses:read courses:write")
    assert "It asks to change" not in page  # one area of changes, no people's data: no warning line
    final = await _submit(flow, interaction, page, _every_line_ticked(page))
    exchanged = await flow.exchange(reg, query_of(final.headers["location"])["code"], verifier)
    assert exchanged.json()["scope"] == "openid profile courses:read courses:write"


async def test_unticking_everything_grants_nothing(flow: Flow) -> None:
    owner = await flow.user("owner")
    reg = await flow.register()
    interaction, page, _ = await _consent_page(flow, reg, owner, "openid courses:read")
    final = await _submit(flow, interaction, page, [])
    assert final.status_code == 303
    assert query_of(final.headers["location"])["error"] == "access_denied"
    assert await flow.count("authz_grants") == 0


@pytest.mark.parametrize(
    "tampered",
    [
        [("keep", "school:write")],  # a scope the request did not ask for
        [("keep", "courses:read"), ("keep_changes", "analytics:read"), ("has_changes", "analytics:read")],
        [("keep", "courses:read"), ("keep_changes", "courses:write")],  # a change part the page did not show
        [("keep", "openid courses:read members:write")],  # one name too many in a line's box
    ],
)
async def test_a_tampered_choice_is_refused_and_changes_nothing(flow: Flow, tampered: list[tuple[str, str]]) -> None:
    owner = await flow.user("owner")
    reg = await flow.register()
    interaction, page, verifier = await _consent_page(flow, reg, owner, "openid courses:read courses:write")
    refused = await _submit(flow, interaction, page, tampered)
    assert refused.status_code == 400, refused.text
    assert "did not offer" in refused.text or "does not have" in refused.text, refused.text
    assert await flow.count("authz_grants") == 0 and await flow.count("authz_codes") == 0
    # The interaction is still open: the page as sent still works.
    final = await _submit(flow, interaction, page, _every_line_ticked(page))
    exchanged = await flow.exchange(reg, query_of(final.headers["location"])["code"], verifier)
    assert exchanged.json()["scope"] == "openid courses:read courses:write"


async def test_a_choice_cannot_reach_past_the_page_after_a_registration_widened(flow: Flow) -> None:
    owner = await flow.user("owner")
    reg = await flow.register(scope="openid courses:read")
    interaction, page, _ = await _consent_page(flow, reg, owner, "openid courses:read")
    widened = await flow.client.put(
        reg["registration_client_uri"].removeprefix("http://127.0.0.1:8000"),
        headers={"Authorization": f"Bearer {reg['registration_access_token']}"},
        json={"client_id": reg["client_id"], "redirect_uris": reg["redirect_uris"], "scope": "openid school:write"},
    )
    assert widened.status_code == 200
    refused = await _submit(flow, interaction, page, [("keep", "openid"), ("keep", "school:write")])
    assert refused.status_code == 400
    assert await flow.count("authz_grants") == 0


async def test_a_step_up_page_with_every_box_ticked_grants_the_new_part_and_the_old(flow: Flow) -> None:
    """A step-up splits an area: its write part is new, its read part allowed before. Both
    boxes ticked grant both (a line's box sends the names it stands for)."""
    owner = await flow.user("owner")
    reg = await flow.register()
    await flow.tokens(reg, owner, scope="openid courses:read")
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope="openid courses:read courses:write"))
    interaction = start.headers["location"]
    page, _ = await flow.page(interaction)
    assert "New: it also asks to" in page.text and "Allowed before" in page.text
    final = await _submit(flow, interaction, page.text, _every_line_ticked(page.text))
    callback = query_of(final.headers["location"])
    scope = await flow.pool.fetchval(
        "SELECT g.scope FROM authz_grants g JOIN authz_codes c ON c.grant_id = g.id WHERE c.consumed_at IS NULL"
    )
    assert "code" in callback and scope == "openid courses:read courses:write"
