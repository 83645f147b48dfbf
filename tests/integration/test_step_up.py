"""Step-up and incremental consent (MCP authorization: a 403 insufficient_scope names
what the operation needs; the client asks again with the union of old and new).

A step-up is the same sign-in: a new approval of the same client in the same browser
sign-in whose scope includes all of a live grant's replaces that grant when its code is
redeemed (reason `stepped_up`): the old refresh token stops working, the connected-apps
page shows one sign-in whose access grew. Another computer or browser, or an approval
that does not include the old scope whole, is a sign-in of its own; a grant bound to
the same DPoP key is replaced as well (`test_grants_per_sign_in.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .api_env import ApiEnv
from .flow import Flow, Lifecycle, pkce_pair, query_of


@pytest.fixture
async def env(open_api_env) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


async def test_step_up_replaces_the_grant_of_the_same_sign_in(env: ApiEnv) -> None:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    reg = await env.flow.register()
    first = await env.flow.tokens(reg, user, scope="openid courses:read")
    refused = await env.api.post(
        "/api/v1/courses", json={"title": "T", "slug": "t"}, headers=env.bearer(first["access_token"])
    )
    assert refused.status_code == 403 and refused.json()["scope"] == "courses:write"
    needed = refused.json()["scope"]

    second = await env.flow.tokens(reg, user, scope=f"{first['scope']} {needed}")
    assert second["scope"] == "openid courses:read courses:write"
    made = await env.api.post(
        "/api/v1/courses", json={"title": "T", "slug": "t"}, headers=env.bearer(second["access_token"])
    )
    assert made.status_code == 201

    life = Lifecycle(env.flow)
    old = await life.refresh(reg, first["refresh_token"])  # the sign-in goes on with the wider grant
    assert old.status_code == 400 and old.json()["error"] == "invalid_grant", old.text
    assert (await life.refresh(reg, second["refresh_token"])).status_code == 200
    assert await env.flow.count("authz_grants WHERE revoked_at IS NULL") == 1
    assert await env.flow.count("authz_grants WHERE revoke_reason = 'stepped_up'") == 1
    # Its access tokens end with it: the resource API refuses the narrower one.
    gone = await env.api.get("/api/v1/courses", headers=env.bearer(first["access_token"]))
    assert gone.status_code == 401, gone.text


async def test_a_step_up_in_another_browser_is_a_sign_in_of_its_own(flow: Flow) -> None:
    user = await flow.user("owner")
    reg = await flow.register()
    first = await flow.tokens(reg, user, scope="openid courses:read")
    flow.client.cookies.clear()  # another computer or browser: another sign-in
    second = await flow.tokens(reg, user, scope="openid courses:read courses:write")
    assert second["scope"] == "openid courses:read courses:write"
    assert (await Lifecycle(flow).refresh(reg, first["refresh_token"])).status_code == 200
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 2


async def test_an_approval_that_drops_part_of_the_old_scope_leaves_the_old_grant(flow: Flow) -> None:
    """Only a grant whose scope the new one includes whole is continued: an approval that
    is narrower somewhere is another sign-in, and the older access stays."""
    user = await flow.user("owner")
    reg = await flow.register()
    first = await flow.tokens(reg, user, scope="openid courses:read posts:read")
    second = await flow.tokens(reg, user, scope="openid courses:read courses:write")
    assert second["scope"] == "openid courses:read courses:write"
    assert (await Lifecycle(flow).refresh(reg, first["refresh_token"])).status_code == 200
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 2


async def test_an_approval_never_exchanged_ends_nothing(flow: Flow) -> None:
    """The old lineage ends when the new code is redeemed, not when it is approved."""
    user = await flow.user("owner")
    reg = await flow.register()
    first = await flow.tokens(reg, user, scope="openid courses:read")
    callback, _, _ = await flow.authorize(reg, user, scope="openid courses:read courses:write")
    assert "code" in callback
    assert (await Lifecycle(flow).refresh(reg, first["refresh_token"])).status_code == 200


async def test_two_installs_of_the_same_app_keep_their_own_grants(flow: Flow) -> None:
    user = await flow.user("owner")
    one, two = await flow.register(), await flow.register()  # each install registers itself
    first = await flow.tokens(one, user)
    await flow.tokens(two, user)
    assert (await Lifecycle(flow).refresh(one, first["refresh_token"])).status_code == 200
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 2


async def test_another_users_grant_of_the_same_client_is_not_replaced(flow: Flow) -> None:
    reg = await flow.register()
    ann, bob = await flow.user("owner"), await flow.user("owner")
    anns = await flow.tokens(reg, ann)
    flow.client.cookies.clear()
    await flow.tokens(reg, bob)
    assert (await Lifecycle(flow).refresh(reg, anns["refresh_token"])).status_code == 200


async def test_an_integrations_remembered_consent_covers_only_what_was_approved(flow: Flow) -> None:
    integration = await flow.integration("Partner CRM")
    user = await flow.user("owner")
    callback, verifier, _ = await flow.authorize(integration, user, scope="openid courses:read")
    assert (await flow.exchange(integration, callback["code"], verifier)).status_code == 200
    _, challenge = pkce_pair()
    more = await flow.start(flow.authorize_params(integration, challenge, scope="openid courses:read courses:write"))
    assert more.headers["location"].startswith("/oauth/interaction/")  # the new scope is asked for
    callback, verifier, _ = await flow.authorize(integration, user, scope="openid courses:read courses:write")
    assert (await flow.exchange(integration, callback["code"], verifier)).status_code == 200
    # The union is now remembered (each sign-in's grant stays).
    silent = await flow.start(
        flow.authorize_params(integration, challenge, scope="openid courses:read courses:write", prompt="none")
    )
    assert "code" in query_of(silent.headers["location"])


async def test_a_second_browsers_consent_page_lists_all_it_grants(flow: Flow) -> None:
    """What was allowed in another browser is that sign-in's: this page asks for all it
    grants, not for "new" items beside a folded list of what was allowed elsewhere."""
    user = await flow.user("owner")
    reg = await flow.register()
    await flow.tokens(reg, user, scope="openid courses:read")
    flow.client.cookies.clear()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope="openid courses:read courses:write"))
    interaction = start.headers["location"]
    assert (await flow.login(interaction, user)).status_code == 303
    page, _ = await flow.page(interaction)
    assert "It will be able to" in page.text and "Allowed before" not in page.text
    listed = page.text.split("It will be able to")[1].split("Deny")[0]
    assert "courses:read" in listed and "courses:write" in listed and "openid" in listed
    assert "another computer or" in page.text


async def test_the_consent_page_shows_what_is_new_apart_from_what_was_allowed(flow: Flow) -> None:
    user = await flow.user("owner")
    reg = await flow.register()
    await flow.tokens(reg, user, scope="openid courses:read")
    _, challenge = pkce_pair()
    start = await flow.start(
        flow.authorize_params(reg, challenge, scope="openid courses:read courses:write posts:read")
    )
    page, _ = await flow.page(start.headers["location"])
    new, allowed = page.text.split("New: it also asks to")[1].split("Allowed before")
    assert "courses:write" in new and "posts:read" in new and "courses:read" not in new
    assert "courses:read" in allowed and "openid" in allowed
    assert "new app" not in page.text  # this person approved it before
