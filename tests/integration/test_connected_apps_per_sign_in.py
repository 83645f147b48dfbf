"""The connected-apps page per sign-in (issue 24): one card per app, inside it each sign-in
(each live grant) with its address and browser; "End this sign-in" and "Remove the app
everywhere" each through a confirmation page that names the app, with a notice naming
what ended; nothing of another person's can be ended or even shown; the admin CLI's
`grants list` carries the same facts."""

from __future__ import annotations

import msgspec

from courseschool.common.revocation import grant_key

from .admin_api import admin_cli
from .api_env import ApiEnv
from .apps_page import CSRF, FIREFOX_LINUX, SAFARI_MAC, browser, cards, confirmed, live, page, rows, text
from .flow import Flow, Lifecycle
from .test_grants_per_sign_in import sign_in


async def _two_sign_ins(flow: Flow, clock, **extra: str) -> tuple[dict, dict, dict, dict]:
    """One person signed in to one app on a Linux laptop, then on a Mac; (user, app, laptop, mac)."""
    user = await flow.user()
    reg = await flow.register(client_name="Lesson Planner")
    laptop = await sign_in(flow, reg, user, address="198.51.100.23", agent=FIREFOX_LINUX, **extra)
    clock.advance(3600)
    mac = await sign_in(flow, reg, user, address="203.0.113.9", agent=SAFARI_MAC, **extra)
    return user, reg, laptop, mac


async def test_two_sign_ins_are_listed_under_one_app(flow: Flow, clock) -> None:
    user, _, laptop, mac = await _two_sign_ins(flow, clock)
    async with browser(flow) as viewer:
        await viewer.authorize(await viewer.register(), user)  # signs this browser in; never exchanged
        response, _ = await page(viewer)
    (card,) = cards(response.text)
    assert list(card) == [mac["grant_id"], laptop["grant_id"]]  # most recently used first
    head = text(response.text.split('<li class="app"')[1].split('<li class="sign-in"')[0])
    assert "Lesson Planner Self-declared name" in head and "Remove the app everywhere" in head
    assert "Signed in 2 times (each computer or browser on its own)" in head
    for grant, agent, address in (
        (laptop, "Firefox on Linux", "198.51.100.23"),
        (mac, "Safari on macOS", "203.0.113.9"),
    ):
        row = text('<li class="sign-in"' + card[grant["grant_id"]].split('<li class="sign-in"')[1])
        assert f"{agent} Approved " in row and f"From address {address}" in row
        assert "What it can use: Your identity, Courses" in row
        assert "Courses See " in row  # the scopes in words
        assert f'href="/oauth/apps/{grant["grant_id"]}/end"' in card[grant["grant_id"]]
    assert "Times are in UTC." in response.text  # what a reader without script sees
    assert '<script src="/oauth/assets/local-time.js" defer></script>' in response.text
    assert "script-src 'self'" in response.headers["content-security-policy"]


async def test_the_local_time_script_is_ours_and_served_as_javascript(flow: Flow) -> None:
    script = await flow.client.get("/oauth/assets/local-time.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "time[datetime]" in script.text and "http" not in script.text
    login = await flow.client.get("/oauth/signin")
    assert "script-src" not in login.headers["content-security-policy"]  # no other page runs script


async def test_ending_one_sign_in_leaves_the_other_working(open_api_env, clock) -> None:
    env: ApiEnv
    async with open_api_env(mode="jwt") as env:
        await env.school("acme")
        user, reg, laptop, mac = await _two_sign_ins(env.flow, clock, scope="openid courses:read")
        life = Lifecycle(env.flow)
        async with browser(env.flow) as viewer:
            await viewer.authorize(reg, user)  # signed in here too (an approval never exchanged)
            confirm = await viewer.client.get(f"/oauth/apps/{laptop['grant_id']}/end")
            assert confirm.status_code == 200
            assert "End the sign-in of Lesson Planner in Firefox on Linux?" in text(confirm.text)
            assert "From address 198.51.100.23" in text(confirm.text) and 'href="/oauth/apps">Keep it' in confirm.text
            done = await confirmed(viewer, laptop["grant_id"], "end")
            assert done.status_code == 303 and done.headers["location"] == f"/oauth/apps?ended={laptop['grant_id']}"
            after = await viewer.client.get(done.headers["location"])
        assert "Signed out of Lesson Planner in Firefox on Linux (from 198.51.100.23)." in text(after.text)
        assert list(rows(after.text)) == [mac["grant_id"]]
        assert await env.flow.redis.exists(grant_key(laptop["grant_id"]))

        refused = await life.refresh(reg, laptop["tokens"]["refresh_token"])
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        assert (
            await env.api.get("/api/v1/courses", headers=env.bearer(laptop["tokens"]["access_token"]))
        ).status_code == 401
        refreshed = await life.refresh(reg, mac["tokens"]["refresh_token"])
        assert refreshed.status_code == 200
        read = await env.api.get("/api/v1/courses", headers=env.bearer(refreshed.json()["access_token"]))
        assert read.status_code == 200


async def test_removing_the_app_everywhere_ends_each_sign_in_and_only_its(flow: Flow, clock) -> None:
    user, reg, laptop, mac = await _two_sign_ins(flow, clock)
    other_app = await sign_in(flow, await flow.register(client_name="Other App"), user)
    async with browser(flow) as viewer:
        await viewer.authorize(reg, user)
        confirm = await viewer.client.get(f"/oauth/apps/{mac['grant_id']}/remove-app")
        words = text(confirm.text)
        assert "Remove Lesson Planner everywhere?" in words and "(2 listed)" in words
        assert "Firefox on Linux, from 198.51.100.23" in words and "Safari on macOS, from 203.0.113.9" in words
        done = await confirmed(viewer, mac["grant_id"], "remove-app")
        assert done.status_code == 303 and done.headers["location"] == f"/oauth/apps?removed={mac['grant_id']}"
        after = await viewer.client.get(done.headers["location"])
    assert "Removed Lesson Planner everywhere: every sign-in of it has ended." in text(after.text)
    assert list(rows(after.text)) == [other_app["grant_id"]]
    for gone in (laptop, mac):
        assert not await live(flow, gone["grant_id"])
        assert (await Lifecycle(flow).refresh(reg, gone["tokens"]["refresh_token"])).status_code == 400
    assert await live(flow, other_app["grant_id"])


async def test_another_persons_sign_in_is_not_found_and_nothing_changes(flow: Flow, clock) -> None:
    _, _, alices, _ = await _two_sign_ins(flow, clock)
    bob = await flow.user()
    async with browser(flow) as bobs_browser:
        await bobs_browser.tokens(await bobs_browser.register(), bob)
        _, csrf = await page(bobs_browser)
        assert csrf
        for grant_id in (alices["grant_id"], "not-a-grant", "00000000-0000-0000-0000-000000000000"):
            for action in ("end", "remove-app"):
                shown = await bobs_browser.client.get(f"/oauth/apps/{grant_id}/{action}")
                assert shown.status_code == 404 and "Lesson Planner" not in shown.text, (grant_id, action)
            for path in ("remove", "remove-app"):
                sent = await bobs_browser.client.post(f"/oauth/apps/{grant_id}/{path}", data={"csrf": csrf})
                assert sent.status_code == 404 and "There is no such access to remove" in sent.text
        # a notice is only ever about the viewer's own ended sign-in
        notice = await bobs_browser.client.get(f"/oauth/apps?ended={alices['grant_id']}")
        assert "Lesson Planner" not in notice.text and 'role="status"' not in notice.text
    assert await live(flow, alices["grant_id"])
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL") == 0


async def test_a_forged_or_missing_token_ends_nothing(flow: Flow, clock) -> None:
    user, _, laptop, _ = await _two_sign_ins(flow, clock)
    async with browser(flow) as viewer:
        await viewer.tokens(await viewer.register(), user)
        assert (await page(viewer))[1]  # the page's own forms carry a token
        logout_page = await viewer.client.get("/oauth/logout")
        other_forms_token = CSRF.search(logout_page.text).group(1)  # valid, for the sign-out form
        for form in ({}, {"csrf": ""}, {"csrf": "0" * 64}, {"csrf": other_forms_token}):
            for path in ("remove", "remove-app"):
                refused = await viewer.client.post(f"/oauth/apps/{laptop['grant_id']}/{path}", data=form)
                assert refused.status_code == 403, (path, form)
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL") == 0


async def test_a_live_sign_in_is_named_in_no_notice(flow: Flow, clock) -> None:
    user, reg, laptop, _ = await _two_sign_ins(flow, clock)
    async with browser(flow) as viewer:
        await viewer.authorize(reg, user)
        for query in (f"ended={laptop['grant_id']}", "removed=nonsense", "done=removed"):
            response = await viewer.client.get(f"/oauth/apps?{query}")
            assert 'role="status"' not in response.text, query


async def test_not_signed_in_the_confirmation_pages_go_to_sign_in(flow: Flow, clock) -> None:
    _, _, laptop, _ = await _two_sign_ins(flow, clock)
    async with browser(flow) as stranger:
        for action in ("end", "remove-app"):
            sent = await stranger.client.get(f"/oauth/apps/{laptop['grant_id']}/{action}")
            assert sent.status_code == 303 and sent.headers["location"] == "/oauth/signin?next=%2Foauth%2Fapps"
    assert await live(flow, laptop["grant_id"])


async def test_the_cli_lists_each_sign_in_with_its_facts(database_url, redis_url, kek, flow: Flow, clock) -> None:
    user, reg, laptop, mac = await _two_sign_ins(flow, clock)
    as_json = admin_cli(database_url, redis_url, kek, "--json", "grants", "list", "--user", user["email"])
    assert as_json.returncode == 0, as_json.stderr
    listed = {g["id"]: g for g in msgspec.json.decode(as_json.stdout)}
    assert set(listed) == {laptop["grant_id"], mac["grant_id"]}
    for grant, agent, address in (
        (laptop, "Firefox on Linux", "198.51.100.23"),
        (mac, "Safari on macOS", "203.0.113.9"),
    ):
        row = listed[grant["grant_id"]]
        assert (row["client_id"], row["client_name"], row["user_email"]) == (
            reg["client_id"],
            "Lesson Planner",
            user["email"],
        )
        assert (row["created_agent"], row["created_from"]) == (agent, address)
        assert row["created_at"] and row["last_used_at"] and row["revoked_at"] is None
        assert row["scope"] == "openid profile email courses:read"
    as_text = admin_cli(database_url, redis_url, kek, "grants", "list", "--user", user["email"])
    assert as_text.returncode == 0, as_text.stderr
    lines = as_text.stdout.splitlines()
    assert len(lines) == 2
    for grant, agent, address in (
        (laptop, "Firefox on Linux", "198.51.100.23"),
        (mac, "Safari on macOS", "203.0.113.9"),
    ):
        (line,) = [ln for ln in lines if ln.startswith(f"id={grant['grant_id']}")]
        assert f"created_agent={agent}" in line and f"created_from={address}" in line
        assert "client_name=Lesson Planner" in line and "last_used_at=" in line


async def test_a_step_up_shows_one_sign_in_whose_access_grew(flow: Flow, clock) -> None:
    """Asking for more in the same browser continues the sign-in: one row, approved when
    it was first approved, with when its access grew; never two identical cards."""
    user = await flow.user()
    reg = await flow.register(client_name="Growing Agent")
    first = await flow.tokens(reg, user, scope="openid courses:read")
    clock.advance(3600)
    second = await flow.tokens(reg, user, scope="openid courses:read courses:write")
    async with browser(flow) as viewer:
        await viewer.authorize(await viewer.register(), user)  # signs this browser in; never exchanged
        response, _ = await page(viewer)
    (card,) = cards(response.text)
    (grant_id,) = card
    assert await live(flow, grant_id)
    assert await flow.count("authz_grants WHERE revoke_reason = 'stepped_up'") == 1
    head = text(response.text.split('<li class="app"')[1].split('<li class="sign-in"')[0])
    assert "Signed in once" in head
    row = text(card[grant_id])
    approved = await flow.pool.fetchval("SELECT min(created_at) FROM authz_grants")
    grew = await flow.pool.fetchval("SELECT created_at FROM authz_grants WHERE id = $1::uuid", grant_id)
    assert f"Approved {approved:%-d %b %Y, %H:%M} UTC" in row
    assert f"Access grew {grew:%-d %b %Y, %H:%M} UTC" in row
    assert "What it can use: Your identity, Courses" in row and "add, edit and delete courses" in row
    assert first["scope"] != second["scope"]
