"""A school's block (issue 38): it holds against approvals in flight (checked where a
grant is made, under the school's lock, and again at the code exchange and at every
refresh, which ends a grant the block covers), it covers the software and not one
registration (a metadata document's origin, a self-registered client's name as a reader
reads it), an owner's block and an owner's access are the owner's, and every refusal
says the school blocked the app: to the person, to the app and in the record."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from courseschool.authz.protocol.school_blocks import BLOCKED, keys_to_block

from .cimd import LOOPBACK, publish
from .conftest import AppClient
from .flow import BASE_URL, Flow, Lifecycle, csrf_of, pkce_pair, query_of

PAGE = "/oauth/school/apps"


async def _sign_in_as(flow: Flow, user: dict[str, str]) -> None:
    flow.client.cookies.clear()
    form = await flow.client.get(f"/oauth/signin?next={PAGE}")
    done = await flow.client.post(
        "/oauth/signin",
        data={"csrf": csrf_of(form.text), "email": user["email"], "password": user["password"], "next": PAGE},
    )
    assert done.status_code == 303, done.text


async def _block(flow: Flow, client_id: str) -> httpx.Response:
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "block", "client_id": client_id})
    assert confirm.status_code == 200, confirm.text
    return await flow.client.post(f"{PAGE}/block", data={"csrf": csrf_of(confirm.text), "client_id": client_id})


def _browser(flow: Flow) -> Flow:
    """Another browser on the same server: cookies of its own."""
    app = flow.client.app  # type: ignore[attr-defined]
    client = AppClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)
    client.app = app
    return Flow(client, flow.pool, flow.redis)


async def _at_consent(browser: Flow, reg: dict[str, Any], user: dict[str, str]) -> tuple[str, str, str]:
    """A person signed in at the app's consent page: (interaction, its CSRF token, verifier)."""
    verifier, challenge = pkce_pair()
    start = await browser.start(browser.authorize_params(reg, challenge, scope="openid courses:read"))
    interaction = start.headers["location"]
    await browser.login(interaction, user)
    _, csrf = await browser.page(interaction)
    return interaction, csrf, verifier


async def _live_grants(flow: Flow, client_id: str, school_id: str) -> int:
    return await flow.pool.fetchval(
        "SELECT count(*) FROM authz_grants WHERE client_id = $1 AND school_id = $2::uuid AND revoked_at IS NULL",
        client_id,
        school_id,
    )


@pytest.mark.parametrize("spread", [0.001, 0.003, 0.006])
async def test_approvals_in_flight_while_the_owner_blocks_get_no_working_token(flow: Flow, spread: float) -> None:
    """20 approvals posted, each then exchanged and refreshed, while the owner's block is
    posted among them (`spread` apart: some before it, some while it is being made)."""
    school = await flow.school("racing")
    owner = await flow.user("owner", school=school)
    reg = await flow.register(client_name="Racing Agent", grant_types=["authorization_code", "refresh_token"])
    browsers = [_browser(flow) for _ in range(20)]
    people = [await flow.user("student", school=school) for _ in browsers]
    pending = [await _at_consent(b, reg, p) for b, p in zip(browsers, people, strict=True)]
    first = await flow.tokens(reg, await flow.user("lecturer", school=school))  # access held before the block
    await _sign_in_as(flow, owner)
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "block", "client_id": reg["client_id"]})
    assert confirm.status_code == 200
    life = Lifecycle(flow)

    async def approve(n: int, browser: Flow, interaction: str, csrf: str, verifier: str) -> dict[str, Any] | None:
        await asyncio.sleep(n * spread)  # approvals spread over the time the block takes, before and after it
        done = await browser.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
        callback = query_of(done.headers["location"])
        if "code" not in callback:
            assert callback["error"] == "access_denied" and callback["error_description"] == BLOCKED
            return None
        exchanged = await browser.exchange(reg, callback["code"], verifier)
        if exchanged.status_code != 200:
            assert exchanged.json()["error"] == "invalid_grant", exchanged.text
            return None
        tokens: dict[str, Any] = exchanged.json()
        refreshed = await Lifecycle(browser).refresh(reg, tokens["refresh_token"])
        return refreshed.json() if refreshed.status_code == 200 else tokens

    async def block() -> int:
        await asyncio.sleep(len(browsers) * spread / 2)
        sent = await flow.client.post(
            f"{PAGE}/block", data={"csrf": csrf_of(confirm.text), "client_id": reg["client_id"]}
        )
        return sent.status_code

    approvals = asyncio.gather(*(approve(n, b, *p) for n, (b, p) in enumerate(zip(browsers, pending, strict=True))))
    outcomes, blocked = await asyncio.gather(approvals, block())
    assert blocked == 303
    assert await _live_grants(flow, reg["client_id"], school) == 0
    for tokens in [first, *outcomes]:
        if tokens is None:
            continue
        assert await life.userinfo_status(tokens["access_token"]) == 401
        refused = await life.refresh(reg, tokens["refresh_token"])
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    for browser in browsers:
        await browser.client.aclose()


async def _approved_code(flow: Flow, reg: dict[str, Any], user: dict[str, str]) -> tuple[str, str]:
    callback, verifier, _ = await flow.authorize(reg, user)
    return callback["code"], verifier


async def _block_without_ending(flow: Flow, client_id: str, owner: dict[str, str]) -> None:
    """The block's row alone, as if its grants had been read before an approval committed."""
    stores = flow.client.app.state.authz.account_pages  # type: ignore[attr-defined]
    client = await stores.directory.get(client_id)
    await stores.school_apps.block(
        owner["school_id"],
        client_id,
        client_name=client.client_name,
        keys=keys_to_block(client),
        by=owner["id"],
        by_role="owner",
        now=stores.clock.now(),
    )


async def test_the_code_exchange_refuses_a_blocked_apps_code_and_ends_its_grant(flow: Flow) -> None:
    school = await flow.school("exchange")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    reg = await flow.register(client_name="Late Agent")
    code, verifier = await _approved_code(flow, reg, student)
    await _block_without_ending(flow, reg["client_id"], owner)
    refused = await flow.exchange(reg, code, verifier)
    assert refused.status_code == 400 and refused.json() == {"error": "invalid_grant", "error_description": BLOCKED}
    assert await _live_grants(flow, reg["client_id"], school) == 0
    reason = await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE client_id = $1", reg["client_id"])
    assert reason == "school_blocked"


async def test_a_refresh_of_a_blocked_apps_grant_is_refused_and_ends_the_grant(flow: Flow) -> None:
    school = await flow.school("refresh")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    reg = await flow.register(client_name="Kept Agent")
    tokens = await flow.tokens(reg, student)
    await _block_without_ending(flow, reg["client_id"], owner)
    life = Lifecycle(flow)
    refused = await life.refresh(reg, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error_description"] == BLOCKED
    assert await _live_grants(flow, reg["client_id"], school) == 0
    assert await life.userinfo_status(tokens["access_token"]) == 401


async def _consent_of(flow: Flow, reg: dict[str, Any], user: dict[str, str]) -> tuple[str, httpx.Response, str]:
    flow.client.cookies.clear()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, decision_page="true"))
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    await flow.login(interaction, user)
    page, csrf = await flow.page(interaction)
    return interaction, page, csrf


async def test_a_new_registration_of_a_blocked_name_is_blocked_and_the_pages_say_so(flow: Flow) -> None:
    school = await flow.school("renamed")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    reg = await flow.register(client_name="Grading Agent")
    await flow.tokens(reg, student)
    await _sign_in_as(flow, owner)
    assert (await _block(flow, reg["client_id"])).status_code == 303
    for name in ("Grading Agent", "grading agent (Official)", "Gr\u0430ding Agent"):  # the last: a Cyrillic a
        again = await flow.register(client_name=name)
        interaction, page, csrf = await _consent_of(flow, again, student)
        assert "has blocked an app named" in page.text and "Grading Agent" in page.text, name
        assert 'value="approve"' not in page.text
        forced = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
        done = await flow.client.get(forced.headers["location"])
        assert "Your school blocked" in done.text and "You denied" not in done.text
        back = re.search(r'href="([^"]+)" autofocus', done.text)
        assert back is not None
        callback = query_of(back.group(1).replace("&amp;", "&"))
        assert callback["error"] == "access_denied" and callback["error_description"] == BLOCKED
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 0
    other = await flow.register(client_name="Grading Agent Helper")  # another name: not blocked
    assert (await flow.tokens(other, student))["access_token"]
    outsider = await flow.user("student", school=await flow.school("elsewhere"))
    flow.client.cookies.clear()
    assert (await flow.tokens(await flow.register(client_name="Grading Agent"), outsider))["access_token"]
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    assert await flow.count("authz_events WHERE action = 'consent_blocked'") == 3
    assert await flow.count("authz_events WHERE action = 'consent_denied'") == 0


async def test_a_blocked_document_app_is_blocked_under_any_url_of_its_origin(cimd_flow: Flow, site: Any) -> None:
    server, _ = site
    flow = cimd_flow
    school = await flow.school("documents")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    url = publish(server, "/agent.json")
    await flow.tokens({"client_id": url, "redirect_uris": [LOOPBACK]}, student)
    await _sign_in_as(flow, owner)
    assert (await _block(flow, url)).status_code == 303
    for path in ("/agent2.json", "/other/agent.json?v=2"):
        moved = publish(server, path, client_name="Another Name")
        interaction, page, csrf = await _consent_of(flow, {"client_id": moved, "redirect_uris": [LOOPBACK]}, student)
        assert "has blocked an app named" in page.text and 'value="approve"' not in page.text, path
        forced = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
        assert forced.status_code == 303
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 0


async def test_an_owners_block_and_an_owners_access_are_not_an_admins_to_undo(flow: Flow) -> None:
    school = await flow.school("owned")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    student = await flow.user("student", school=school)
    reg = await flow.register(client_name="Owner's Tool")
    flow.client.cookies.clear()
    owners = await flow.tokens(reg, owner)
    flow.client.cookies.clear()
    students = await flow.tokens(reg, student)
    await _sign_in_as(flow, admin)
    page = await flow.client.get(PAGE)
    assert f"person={owner['id']}" not in page.text  # no "End access" for the owner
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "end-all", "client_id": reg["client_id"]})
    csrf = csrf_of(confirm.text)
    refused = await flow.client.post(
        f"{PAGE}/end", data={"csrf": csrf, "client_id": reg["client_id"], "person": owner["id"]}
    )
    assert refused.status_code == 403 and "Only an owner" in refused.text
    everyone = await flow.client.post(f"{PAGE}/end", data={"csrf": csrf, "client_id": reg["client_id"]})
    assert everyone.status_code == 303
    life = Lifecycle(flow)
    assert (await life.refresh(reg, owners["refresh_token"])).status_code == 200  # the owner's stays
    assert (await life.refresh(reg, students["refresh_token"])).status_code == 400
    other = await flow.register(client_name="Blocked by the owner")
    flow.client.cookies.clear()
    await flow.tokens(other, student)
    await _sign_in_as(flow, owner)
    assert (await _block(flow, other["client_id"])).status_code == 303
    await _sign_in_as(flow, admin)
    page = await flow.client.get(PAGE)
    assert "Blocked by the owner" in page.text and "Unblock</button>" not in page.text
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "end-all", "client_id": reg["client_id"]})
    lifted = await flow.client.post(
        f"{PAGE}/unblock", data={"csrf": csrf_of(confirm.text), "client_id": other["client_id"]}
    )
    assert lifted.status_code == 403 and "only an owner may unblock" in lifted.text
    assert await flow.count("authz_school_blocks") >= 1
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    rows = await flow.pool.fetch(
        "SELECT action, source, details FROM authz_events WHERE action IN ('app_blocked', 'school_access_ended')"
    )
    assert {r["action"] for r in rows} == {"app_blocked", "school_access_ended"}
    for row in rows:
        assert row["source"] and row["details"]["role"] in ("owner", "admin"), row
    # The admin's refused attempts are on record too, as security events: who tried what.
    tried = await flow.pool.fetch(
        "SELECT action, kind, subject, client_id, source, details FROM authz_events "
        "WHERE action IN ('school_access_end_refused', 'app_unblock_refused') ORDER BY id"
    )
    assert [(r["action"], r["client_id"]) for r in tried] == [
        ("school_access_end_refused", reg["client_id"]),
        ("app_unblock_refused", other["client_id"]),
    ]
    for row in tried:
        assert (row["kind"], row["subject"], row["details"]["role"]) == ("security", admin["id"], "admin"), row
        assert row["source"] and row["details"]["reason"] == "owners_decision", row
    assert tried[0]["details"]["person"] == owner["id"]


async def test_lecturers_and_students_are_told_the_page_is_for_owners_and_admins(flow: Flow) -> None:
    lecturer = await flow.user("lecturer")
    await _sign_in_as(flow, lecturer)
    page = await flow.client.get(PAGE)
    assert page.status_code == 404
    assert "for your school&#39;s owners and admins" in page.text and "developer" not in page.text


async def test_a_person_sees_on_their_apps_page_what_the_school_ended_or_blocked(flow: Flow) -> None:
    school = await flow.school("told")
    owner, lecturer = await flow.user("owner", school=school), await flow.user("lecturer", school=school)
    ended, blocked = await flow.register(client_name="Ended Tool"), await flow.register(client_name="Blocked Tool")
    for reg in (ended, blocked):
        flow.client.cookies.clear()
        await flow.tokens(reg, lecturer)
    await _sign_in_as(flow, owner)
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "end-all", "client_id": ended["client_id"]})
    sent = await flow.client.post(f"{PAGE}/end", data={"csrf": csrf_of(confirm.text), "client_id": ended["client_id"]})
    assert sent.status_code == 303
    assert (await _block(flow, blocked["client_id"])).status_code == 303
    await _sign_in_as(flow, lecturer)
    page = await flow.client.get("/oauth/apps")
    assert "Ended by your school" in page.text
    told = page.text[page.text.index("Ended by your school") :]
    assert "Ended Tool" in told and "ended your access" in told
    assert "Blocked Tool" in told and "blocked this app" in told
    assert told.count("UTC</time>") == 2
