"""The school's apps page: a school's owners and admins see every app anyone at their
school connected (who approved it, their role, what it may do, when it was last used)
and may end one person's access, everyone's, or block the app for the school (its
grants there end; no one there may approve it again; its consent page says why). Each
action is confirmed on a page that names the app, bound to the session by its CSRF
token, and recorded. Lecturers, students and another school's owner see nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .flow import Flow, Lifecycle, csrf_of, pkce_pair, query_of

PAGE = "/oauth/school/apps"


async def _sign_in_as(flow: Flow, user: dict[str, str]) -> None:
    """A browser of `user`, signed in on the standalone sign-in page."""
    flow.client.cookies.clear()
    form = await flow.client.get(f"/oauth/signin?next={PAGE}")
    done = await flow.client.post(
        "/oauth/signin",
        data={"csrf": csrf_of(form.text), "email": user["email"], "password": user["password"], "next": PAGE},
    )
    assert done.status_code == 303, done.text


async def _school_with_an_app(flow: Flow) -> tuple[dict[str, Any], dict[str, str], dict[str, str], dict[str, Any]]:
    """A school, its owner, a lecturer who connected an app; (owner, lecturer, the app, its tokens)."""
    school = await flow.school("stewarded")
    owner = await flow.user("owner", school=school)
    lecturer = await flow.user("lecturer", school=school)
    reg = await flow.register(client_name="Grading Agent")
    flow.client.cookies.clear()
    tokens = await flow.tokens(reg, lecturer, scope="openid courses:read courses:write")
    return owner, lecturer, reg, tokens


async def test_the_owner_sees_every_app_of_the_school_with_who_approved_it(flow: Flow) -> None:
    owner, lecturer, _, _ = await _school_with_an_app(flow)
    elsewhere = await flow.user("owner", school=await flow.school("elsewhere"))
    other_reg = await flow.register(client_name="Elsewhere App")
    flow.client.cookies.clear()
    await flow.tokens(other_reg, elsewhere)
    await _sign_in_as(flow, owner)
    page = await flow.client.get(PAGE)
    assert page.status_code == 200, page.text
    assert "Grading Agent" in page.text and "Self-declared name" in page.text
    assert lecturer["email"] in page.text and "lecturer" in page.text
    assert "Courses" in page.text and "UTC</time>" in page.text
    assert "Elsewhere App" not in page.text  # another school's apps do not exist here


@pytest.mark.parametrize("role", ["lecturer", "student"])
async def test_lecturers_and_students_get_no_page(flow: Flow, role: str) -> None:
    person = await flow.user(role)
    await _sign_in_as(flow, person)
    page = await flow.client.get(PAGE)
    assert page.status_code == 404
    assert "Grading Agent" not in page.text


async def test_ending_one_persons_access_is_confirmed_and_ends_only_theirs(flow: Flow) -> None:
    owner, lecturer, reg, tokens = await _school_with_an_app(flow)
    colleague = await flow.user("lecturer", school=lecturer["school_id"])
    flow.client.cookies.clear()
    theirs = await flow.tokens(reg, colleague)
    await _sign_in_as(flow, owner)
    page = await flow.client.get(PAGE)
    link = re.search(
        r'href="(/oauth/school/apps/confirm\?action=end-person[^"]*person=' + lecturer["id"] + ')"', page.text
    )
    assert link is not None
    confirm = await flow.client.get(link.group(1).replace("&amp;", "&"))
    assert confirm.status_code == 200 and "Grading Agent" in confirm.text and "End " in confirm.text
    ended = await flow.client.post(
        f"{PAGE}/end", data={"csrf": csrf_of(confirm.text), "client_id": reg["client_id"], "person": lecturer["id"]}
    )
    assert ended.status_code == 303 and ended.headers["location"] == f"{PAGE}?done=ended"
    life = Lifecycle(flow)
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 400
    assert (await life.refresh(reg, theirs["refresh_token"])).status_code == 200  # the colleague's stays
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    assert await flow.count("authz_events WHERE action = 'school_access_ended' AND kind = 'admin'") == 1
    await _recorded_as_the_owner_from_their_address(flow, "school_access_ended", owner)


async def _recorded_as_the_owner_from_their_address(
    flow: Flow, action: str, owner: dict[str, str], reason: str = "revoked_by_school"
) -> None:
    """Issue 38 (from 9): an owner's ending of access was recorded as `actor=admin`, and
    the action itself without the address it came from."""
    acted = await flow.pool.fetchrow("SELECT actor, source, subject FROM authz_events WHERE action = $1", action)
    assert dict(acted) == {"actor": "user", "source": "127.0.0.1", "subject": owner["id"]}
    ended = await flow.pool.fetch(
        "SELECT actor, source FROM authz_events WHERE action = 'grant_revoked' AND details->>'reason' = $1",
        reason,
    )
    assert ended and {(row["actor"], row["source"]) for row in ended} == {("user", "127.0.0.1")}


async def test_blocking_ends_the_grants_and_the_consent_page_says_the_school_blocked_it(flow: Flow) -> None:
    owner, lecturer, reg, tokens = await _school_with_an_app(flow)
    await _sign_in_as(flow, owner)
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "block", "client_id": reg["client_id"]})
    assert confirm.status_code == 200 and "Block" in confirm.text
    blocked = await flow.client.post(
        f"{PAGE}/block", data={"csrf": csrf_of(confirm.text), "client_id": reg["client_id"]}
    )
    assert blocked.status_code == 303
    assert (await Lifecycle(flow).refresh(reg, tokens["refresh_token"])).status_code == 400
    assert await Lifecycle(flow).userinfo_status(tokens["access_token"]) == 401
    # The next consent of the school's people is refused, and the page says why.
    flow.client.cookies.clear()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    await flow.login(interaction, lecturer)
    page, csrf = await flow.page(interaction)
    assert "has blocked this app" in page.text and 'value="approve"' not in page.text
    forced = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert query_of(forced.headers["location"])["error"] == "access_denied"
    assert await flow.count("authz_grants WHERE revoked_at IS NULL") == 0
    # Another school's people may still approve it.
    outsider = await flow.user("owner", school=await flow.school("unblocked"))
    flow.client.cookies.clear()
    assert (await flow.tokens(reg, outsider))["access_token"]
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    assert await flow.count("authz_events WHERE action = 'app_blocked' AND kind = 'security'") == 1
    await _recorded_as_the_owner_from_their_address(flow, "app_blocked", owner, "school_blocked")
    # Lifting the block reopens the school to the app: a security event as the block is.
    flow.client.cookies.clear()
    await _sign_in_as(flow, owner)
    listed = await flow.client.get(PAGE)
    lifted = await flow.client.post(
        f"{PAGE}/unblock", data={"csrf": csrf_of(listed.text), "client_id": reg["client_id"]}
    )
    assert lifted.status_code == 303
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    assert await flow.count("authz_events WHERE action = 'app_unblocked' AND kind = 'security'") == 1


async def test_actions_without_the_csrf_token_or_for_another_school_change_nothing(flow: Flow) -> None:
    owner, _, reg, tokens = await _school_with_an_app(flow)
    other_owner = await flow.user("owner", school=await flow.school("neighbour"))
    flow.client.cookies.clear()
    own = await flow.register(client_name="Neighbour's own")
    await flow.tokens(own, other_owner)
    await _sign_in_as(flow, owner)
    for path in ("/end", "/block"):
        for csrf in ("", "forged"):
            refused = await flow.client.post(f"{PAGE}{path}", data={"csrf": csrf, "client_id": reg["client_id"]})
            assert refused.status_code == 403, refused.text
    await _sign_in_as(flow, other_owner)
    page = await flow.client.get(PAGE)
    assert "Grading Agent" not in page.text
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "block", "client_id": reg["client_id"]})
    assert confirm.status_code == 404
    theirs = await flow.client.get(f"{PAGE}/confirm", params={"action": "end-all", "client_id": own["client_id"]})
    csrf = csrf_of(theirs.text)  # a valid token of this owner's session
    assert csrf
    ended = await flow.client.post(f"{PAGE}/end", data={"csrf": csrf, "client_id": reg["client_id"]})
    assert ended.status_code == 404
    assert (await Lifecycle(flow).refresh(reg, tokens["refresh_token"])).status_code == 200
    assert await flow.count("authz_school_blocks") == 0


async def test_not_signed_in_every_route_goes_to_sign_in_and_ends_nothing(flow: Flow) -> None:
    _, _, reg, _ = await _school_with_an_app(flow)
    flow.client.cookies.clear()
    back = "/oauth/signin?next=%2Foauth%2Fschool%2Fapps"
    for path in (PAGE, f"{PAGE}/confirm?action=end-all&client_id={reg['client_id']}"):
        sent = await flow.client.get(path)
        assert sent.status_code == 303 and sent.headers["location"] == back, path
    for action in ("end", "block", "unblock"):
        sent = await flow.client.post(f"{PAGE}/{action}", data={"client_id": reg["client_id"], "csrf": "x"})
        assert sent.status_code == 303 and sent.headers["location"] == back, action
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL") == 0
    assert await flow.count("authz_school_blocks") == 0
