"""Removing access on the connected-apps page: the grant is revoked at once (its refresh
token refused, its access tokens refused, the revocation published for the resource
servers), the consent remembered for the app forgotten, the other grants untouched. The
forms are bound to the sign-in session: anything else is refused and revokes nothing."""

from __future__ import annotations

import re

from courseschool.common.revocation import grant_key

from .apps_page import CSRF, approve, browser, live, page, remove, rows, text
from .flow import Flow, Lifecycle, csrf_of, pkce_pair, query_of


async def test_remove_access_ends_that_grant_at_once_and_no_other(flow: Flow) -> None:
    user = await flow.user()
    life = Lifecycle(flow)
    removed, kept = await approve(flow, user, client_name="App A"), await approve(flow, user, client_name="App B")
    response, csrf = await page(flow)
    assert set(rows(response.text)) == {removed["grant_id"], kept["grant_id"]}

    done = await remove(flow, removed["grant_id"], csrf)
    assert done.status_code == 303 and done.headers["location"] == f"/oauth/apps?ended={removed['grant_id']}"
    after = await flow.client.get(done.headers["location"])
    assert "Signed out of App A in python-httpx (from 127.0.0.1)." in text(after.text)
    assert list(rows(after.text)) == [kept["grant_id"]]

    refused = await life.refresh(removed["reg"], removed["tokens"]["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert await life.userinfo_status(removed["tokens"]["access_token"]) == 401
    assert await flow.redis.exists(grant_key(removed["grant_id"]))  # what the resource servers check
    reason = await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE id = $1::uuid", removed["grant_id"])
    assert reason == "revoked_by_user"

    assert await life.userinfo_status(kept["tokens"]["access_token"]) == 200
    assert (await life.refresh(kept["reg"], kept["tokens"]["refresh_token"])).status_code == 200
    assert not await flow.redis.exists(grant_key(kept["grant_id"]))


async def test_remove_access_forgets_the_remembered_consent(flow: Flow) -> None:
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    user = await flow.user()
    made = await approve(flow, user, integration, scope="openid courses:read")
    assert await flow.count("authz_consents") == 1
    assert (await remove(flow, made["grant_id"])).status_code == 303
    assert await flow.count("authz_consents") == 0
    _, challenge = pkce_pair()
    silent = await flow.start(flow.authorize_params(integration, challenge, scope="openid courses:read", prompt="none"))
    assert query_of(silent.headers["location"])["error"] == "consent_required"


async def test_another_persons_grant_is_not_found_and_stays(flow: Flow) -> None:
    alice = await flow.user(email="alice@example.test")
    alices = await approve(flow, alice)
    async with browser(flow) as bobs_browser:
        await approve(bobs_browser, await flow.user(email="bob@example.test"))
        for grant_id in (alices["grant_id"], "not-a-grant", "00000000-0000-0000-0000-000000000000"):
            refused = await remove(bobs_browser, grant_id)
            assert refused.status_code == 404 and "text/html" in refused.headers["content-type"], grant_id
            assert "There is no such access to remove" in refused.text
    assert await live(flow, alices["grant_id"])
    assert await Lifecycle(flow).userinfo_status(alices["tokens"]["access_token"]) == 200


async def test_a_forged_or_missing_token_is_refused_and_nothing_is_revoked(flow: Flow) -> None:
    user = await flow.user()
    app = await approve(flow, user)
    logout_page = await flow.client.get("/oauth/logout")
    another_forms_token = CSRF.search(logout_page.text).group(1)  # valid, for the sign-out form
    async with browser(flow) as second:  # the same person signed in in another browser
        await approve(second, user)
        _, another_sessions_token = await page(second)
    for form in ({}, {"csrf": ""}, {"csrf": "0" * 64}, {"csrf": another_forms_token}, {"csrf": another_sessions_token}):
        for path in (f"/oauth/apps/{app['grant_id']}/remove", "/oauth/apps/remove-all"):
            refused = await flow.client.post(path, data=form)
            assert refused.status_code == 403, (path, form)
            assert refused.headers["x-frame-options"] == "DENY" and "text/html" in refused.headers["content-type"]
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL") == 0


async def test_not_signed_in_a_removal_goes_to_sign_in_and_revokes_nothing(flow: Flow) -> None:
    app = await approve(flow, await flow.user())
    _, csrf = await page(flow)
    async with browser(flow) as stranger:
        for path in (f"/oauth/apps/{app['grant_id']}/remove", "/oauth/apps/remove-all"):
            sent = await stranger.client.post(path, data={"csrf": csrf})
            assert sent.status_code == 303 and sent.headers["location"] == "/oauth/signin?next=%2Foauth%2Fapps"
    assert await live(flow, app["grant_id"])


async def test_a_grant_revoked_elsewhere_disappears_from_the_list(flow: Flow) -> None:
    user = await flow.user()
    app, other = await approve(flow, user), await approve(flow, user)
    assert (await Lifecycle(flow).revoke(app["reg"], app["tokens"]["refresh_token"])).status_code == 200
    assert list(rows((await page(flow))[0].text)) == [other["grant_id"]]
    assert (await remove(flow, app["grant_id"])).status_code == 404  # nothing left to remove


async def test_remove_all_ends_every_grant_of_the_person_and_only_theirs(flow: Flow) -> None:
    user = await flow.user()
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    apps = [
        await approve(flow, user),
        await approve(flow, user),
        await approve(flow, user, integration, scope="openid"),
    ]
    async with browser(flow) as someone_else:
        theirs = await approve(someone_else, await flow.user())
    listed, _ = await page(flow)
    assert 'href="/oauth/apps/remove-all"' in listed.text and 'action="/oauth/apps/remove-all"' not in listed.text
    confirm = await flow.client.get("/oauth/apps/remove-all")  # "Remove all" confirms first, as every removal does
    assert confirm.status_code == 200 and "Remove every app?" in confirm.text and "Partner CRM" in confirm.text
    assert all([await live(flow, app["grant_id"]) for app in apps])  # nothing ended yet
    done = await flow.client.post("/oauth/apps/remove-all", data={"csrf": csrf_of(confirm.text)})
    assert done.status_code == 303 and done.headers["location"] == "/oauth/apps?done=removed-all"
    after = (await flow.client.get(done.headers["location"])).text
    assert rows(after) == {} and "Access removed from every app." in text(after)
    reasons = await flow.pool.fetch("SELECT revoke_reason FROM authz_grants WHERE user_id = $1::uuid", user["id"])
    assert [r["revoke_reason"] for r in reasons] == ["revoked_by_user"] * len(apps)
    for app in apps:
        assert await flow.redis.exists(grant_key(app["grant_id"]))
    assert await flow.count("authz_consents") == 0
    assert await live(flow, theirs["grant_id"])


async def test_the_pages_carry_the_headers_of_every_page(flow: Flow) -> None:
    await approve(flow, await flow.user())
    response, _ = await page(flow)
    signin = await flow.client.get("/oauth/signin")  # signed in: straight on
    assert signin.status_code == 303 and signin.headers["location"] == "/oauth/apps"
    for answer in (response, signin):
        assert answer.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert not re.search(r"<script|https?://", response.text.split("<body>")[1])  # no script, no other site
