"""Review finding 4: an admin's block ended every grant of the app at the school, the
owners' too, and the admin could then lift it (their own block): an owner's access and
an owner's approval undone all the same. Now an admin may not block an app an owner
holds access to or approved (403, the security event `app_block_refused`); an owner may,
and an admin may block what no owner decided."""

from __future__ import annotations

from .flow import Flow, Lifecycle, csrf_of
from .test_school_app_approvals import _approve_on_page
from .test_school_blocks import PAGE, _block, _sign_in_as


async def _refusals(flow: Flow) -> list[tuple[str, str, str]]:
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    rows = await flow.pool.fetch(
        "SELECT kind, client_id, details FROM authz_events WHERE action = 'app_block_refused' ORDER BY id"
    )
    return [(r["kind"], r["client_id"], r["details"]["role"]) for r in rows]


async def test_an_admins_block_leaves_an_owners_access(flow: Flow) -> None:
    """docs/design.md: "an admin may neither lift an owner's block nor end an owner's
    access": nor, then, end it by blocking the app (and unblocking it after)."""
    school = await flow.school("owned")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    reg = await flow.register(client_name="Owner's Tool")
    flow.client.cookies.clear()
    owners = await flow.tokens(reg, owner)
    await _sign_in_as(flow, admin)
    refused = await _block(flow, reg["client_id"])
    assert refused.status_code == 403 and "only an owner may block it" in refused.text
    assert await flow.count("authz_school_block_keys") == 0
    confirm = await flow.client.get(f"{PAGE}/confirm", params={"action": "block", "client_id": reg["client_id"]})
    lifted = await flow.client.post(
        f"{PAGE}/unblock", data={"csrf": csrf_of(confirm.text), "client_id": reg["client_id"]}
    )
    assert lifted.status_code == 404  # nothing was blocked
    assert (await Lifecycle(flow).refresh(reg, owners["refresh_token"])).status_code == 200
    assert await _refusals(flow) == [("security", reg["client_id"], "admin")]


async def test_an_admin_may_not_block_an_app_an_owner_approved(flow: Flow) -> None:
    school = await flow.school("approving")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    reg = await flow.register(client_name="Approved Tool")
    flow.client.cookies.clear()
    students = await flow.tokens(reg, await flow.user("student", school=school))  # the owner holds none
    await _sign_in_as(flow, owner)
    assert (await _approve_on_page(flow, reg["client_id"])).status_code == 303
    await _sign_in_as(flow, admin)
    assert (await _block(flow, reg["client_id"])).status_code == 403
    assert await flow.count("authz_school_block_keys") == 0
    assert (await Lifecycle(flow).refresh(reg, students["refresh_token"])).status_code == 200
    assert await _refusals(flow) == [("security", reg["client_id"], "admin")]


async def test_an_admin_blocks_what_no_owner_decided_and_an_owner_blocks_anything(flow: Flow) -> None:
    school = await flow.school("steered")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    student = await flow.user("student", school=school)
    students_app, owners_app = await flow.register(client_name="Quiz Maker"), await flow.register(client_name="Planner")
    flow.client.cookies.clear()
    students = await flow.tokens(students_app, student)
    flow.client.cookies.clear()
    owners = await flow.tokens(owners_app, owner)
    await _sign_in_as(flow, admin)
    assert (await _block(flow, students_app["client_id"])).status_code == 303
    life = Lifecycle(flow)
    assert (await life.refresh(students_app, students["refresh_token"])).status_code == 400
    await _sign_in_as(flow, owner)
    assert (await _block(flow, owners_app["client_id"])).status_code == 303
    assert (await life.refresh(owners_app, owners["refresh_token"])).status_code == 400
    assert await _refusals(flow) == []


async def test_an_admin_may_not_block_a_look_alike_of_an_app_an_owner_approved(flow: Flow) -> None:
    """A block covers every self-registered app of its name: blocking another
    registration named as the approved one would undo the owner's approval all the same."""
    school = await flow.school("look-alike")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    student = await flow.user("student", school=school)
    approved = await flow.register(client_name="Grading Agent")
    flow.client.cookies.clear()
    students = await flow.tokens(approved, student)
    await _sign_in_as(flow, owner)
    assert (await _approve_on_page(flow, approved["client_id"])).status_code == 303
    look_alike = await flow.register(client_name="Grading Agent")  # in use at the school, as the block page lists
    flow.client.cookies.clear()
    await flow.tokens(look_alike, await flow.user("student", school=school))
    await _sign_in_as(flow, admin)
    assert (await _block(flow, look_alike["client_id"])).status_code == 403
    assert await flow.count("authz_school_block_keys") == 0
    assert (await Lifecycle(flow).refresh(approved, students["refresh_token"])).status_code == 200
    assert await _refusals(flow) == [("security", look_alike["client_id"], "admin")]
