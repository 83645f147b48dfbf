"""Approving apps and asking for approval (issue 39), over HTTP with a real SMTP relay
(aiosmtpd) taking the e-mail: a person stopped by the policy asks from the consent page;
the owners and admins are e-mailed and see the request; an approval (confirmed, bound to
the session) tells the person and their next sign-in works; a decline and an expiry tell
them too; under *apps may read* an approval with changes lets a step-up grant them.
Refusals: lecturers and students may neither set the policy nor decide (404), an admin
may not set the policy (403), a blocked app cannot be asked for, and every form needs
its CSRF token."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from email.message import EmailMessage
from typing import Any

import httpx
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.endpoints.school_apps import block
from courseschool.authz.maintenance import housekeeping
from courseschool.authz.protocol.school_policy import NOT_APPROVED, PENDING
from courseschool.authz.settings import AuthzSettings

from ..support.smtp import SmtpRelay, smtp_relay
from .conftest import serve
from .flow import Flow, Lifecycle, csrf_of, pkce_pair, query_of
from .test_mail_to_people import _with_mail
from .test_school_app_policy import EVERY_SCOPE, set_policy

PAGE = "/oauth/school/apps"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    with smtp_relay() as relay:
        settings = _with_mail(authz_settings, f"smtp+plain://127.0.0.1:{relay.port}")
        async with serve(create_app(settings)) as client:
            yield Flow(client, clean_db, redis_client), relay


async def _mail(flow: Flow, relay: SmtpRelay) -> list[tuple[str, EmailMessage]]:
    """What the outbox sends now: (recipient, message) each; the relay's list emptied."""
    await flow.client.app.state.authz.mail.deliver_due()  # type: ignore[attr-defined]
    sent = [(m.rcpt_tos[0], m.message) for m in relay.accepted]
    relay.accepted.clear()
    return sent


def _text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


async def sign_in_as(flow: Flow, user: dict[str, str]) -> None:
    flow.client.cookies.clear()
    form = await flow.client.get(f"/oauth/signin?next={PAGE}")
    done = await flow.client.post(
        "/oauth/signin",
        data={"csrf": csrf_of(form.text), "email": user["email"], "password": user["password"], "next": PAGE},
    )
    assert done.status_code == 303, done.text


async def consent_page(flow: Flow, reg: dict[str, Any], user: dict[str, str], scope: str) -> tuple[str, str, str]:
    flow.client.cookies.clear()
    verifier, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope=scope))
    interaction = start.headers["location"]
    await flow.login(interaction, user)
    page = await flow.client.get(interaction)
    return interaction, page.text, verifier


async def ask(flow: Flow, interaction: str, page: str, reason: str = "For my essay on Kafka") -> httpx.Response:
    return await flow.client.post(f"{interaction}/ask", data={"csrf": csrf_of(page), "reason": reason})


async def _decide_page(flow: Flow, what: str, request_id: str) -> str:
    page = await flow.client.get(f"{PAGE}/{what}", params={"request": request_id})
    assert page.status_code == 200, page.text
    return page.text


async def _pending_id(flow: Flow) -> str:
    return str(await flow.pool.fetchval("SELECT id FROM authz_app_access_requests WHERE decision IS NULL"))


async def test_ask_approve_and_sign_in(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("strict")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    student = await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    interaction, page, _ = await consent_page(flow, reg, student, "openid account:read")
    assert (await ask(flow, interaction, page)).status_code == 303
    page = (await flow.client.get(interaction)).text
    assert "You asked your school on" in page and f'action="{interaction}/ask"' not in page
    back = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "deny"})
    callback = query_of(back.headers["location"])
    assert callback == {**callback, "error": "access_denied", "error_description": PENDING}

    told = await _mail(flow, relay)
    assert sorted(to for to, _ in told) == sorted([owner["email"], admin["email"]])
    message = told[0][1]
    assert message["Subject"] == "A Student asks your school to approve «Homework Helper»"
    assert "- Why: For my essay on Kafka" in _text(message) and "- Account: see" in _text(message)

    await sign_in_as(flow, owner)
    listed = (await flow.client.get(PAGE)).text
    assert "Only apps the school approved." in listed and "For my essay on Kafka" in listed
    request_id = await _pending_id(flow)
    confirm = await _decide_page(flow, "approve", request_id)
    assert "this one registration only" in confirm
    done = await flow.client.post(
        f"{PAGE}/approve",
        data={
            "csrf": csrf_of(confirm),
            "client_id": reg["client_id"],
            "request": request_id,
            "cover": "all",
            "note": "Enjoy",
        },
    )
    assert done.status_code == 303 and done.headers["location"] == f"{PAGE}?done=approved"
    [(to, decided)] = await _mail(flow, relay)
    assert to == student["email"] and decided["Subject"] == "Your school approved your request for «Homework Helper»"
    assert "Note from the school: Enjoy" in _text(decided)
    assert "For my essay" not in (await flow.client.get(PAGE)).text  # no longer waiting
    flow.client.cookies.clear()
    tokens = await flow.tokens(reg, student, scope="openid account:read")
    assert tokens["scope"] == "openid account:read"
    # The school's rule is a security event (sent to the webhook); a decision about one app
    # within it is a steward's administration; the person's request is theirs.
    await sign_in_as(flow, owner)
    listed = (await flow.client.get(PAGE)).text
    changed = await flow.client.post(f"{PAGE}/policy", data={"csrf": csrf_of(listed), "policy": "anyone"})
    assert changed.status_code == 303
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    kinds = await flow.pool.fetch(
        "SELECT action, kind FROM authz_events WHERE action IN "
        "('school_app_policy_changed', 'app_approved', 'app_access_requested')"
    )
    assert {(r["action"], r["kind"]) for r in kinds} == {
        ("school_app_policy_changed", "security"),
        ("app_approved", "admin"),
        ("app_access_requested", "user"),
    }


async def test_decline_and_expiry_tell_the_person(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    interaction, page, _ = await consent_page(flow, reg, student, "openid account:read")
    await ask(flow, interaction, page)
    await _mail(flow, relay)
    await sign_in_as(flow, owner)
    request_id = await _pending_id(flow)
    confirm = await _decide_page(flow, "decline", request_id)
    done = await flow.client.post(
        f"{PAGE}/decline", data={"csrf": csrf_of(confirm), "request": request_id, "note": "Use the library's"}
    )
    assert done.status_code == 303
    [(to, declined)] = await _mail(flow, relay)
    assert to == student["email"] and "declined" in declined["Subject"]
    assert "Note from the school: Use the library's" in _text(declined)
    callback, _, _ = await flow.authorize(reg, student, scope="openid account:read")
    assert callback["error_description"] == NOT_APPROVED

    interaction, page, _ = await consent_page(flow, reg, student, "openid account:read")
    await ask(flow, interaction, page, "Asking again")  # a new request: the last was decided
    await _mail(flow, relay)
    await flow.pool.execute("UPDATE authz_app_access_requests SET expires_at = now() - interval '1 second'")
    assert (await housekeeping(flow.client.app.state.authz))["access_requests_expired"] == 1  # type: ignore[attr-defined]
    [(to, expired)] = await _mail(flow, relay)
    assert to == student["email"] and "expired before anyone decided it" in _text(expired)


async def test_read_only_changes_approved_then_a_step_up_grants_them(flow: Flow) -> None:
    school = await flow.school("readers")
    owner, lecturer = await flow.user("owner", school=school), await flow.user("lecturer", school=school)
    await set_policy(flow, owner, "read_only")
    reg = await flow.register(client_name="Agent")
    interaction, page, verifier = await consent_page(flow, reg, lecturer, EVERY_SCOPE)
    assert "Needs the school" in page
    assert (await ask(flow, interaction, page, "To fix my course outlines")).status_code == 303
    page = (await flow.client.get(interaction)).text
    done = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "approve"})
    first = (await flow.exchange(reg, query_of(done.headers["location"])["code"], verifier)).json()
    assert not [s for s in first["scope"].split() if s.endswith(":write")]
    lecturer_cookies = dict(flow.client.cookies)

    await sign_in_as(flow, owner)
    request_id = await _pending_id(flow)
    confirm = await _decide_page(flow, "approve", request_id)
    # Ticked already: the changes asked for, and seeing the same areas.
    for ticked in ("courses:write", "courses:read", "posts:write", "posts:read"):
        assert f'value="{ticked}" id="scope-{ticked.replace(":", "-")}" checked' in confirm, ticked
    assert 'value="orders:read" id="scope-orders-read" checked' not in confirm
    form = {"csrf": csrf_of(confirm), "client_id": reg["client_id"], "request": request_id, "cover": "chosen"}
    body = "&".join(f"{k}={httpx.QueryParams({k: v})[k]}" for k, v in form.items())
    body += "&scope=courses%3Aread&scope=courses%3Awrite"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    assert (await flow.client.post(f"{PAGE}/approve", content=body, headers=headers)).status_code == 303

    flow.client.cookies.clear()
    flow.client.cookies.update(lecturer_cookies)  # the lecturer's browser sign-in, as before
    more = await flow.tokens(reg, lecturer, scope=EVERY_SCOPE)  # what it asked for before, and now gets more of
    assert {s for s in more["scope"].split() if s.endswith(":write")} == {"courses:write"}
    ended = await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE revoked_at IS NOT NULL")
    assert ended == "stepped_up"


async def test_only_stewards_decide_and_only_owners_set_the_policy(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    reg = await flow.register(client_name="Homework Helper")
    await set_policy(flow, owner, "approved_only")
    student = await flow.user("student", school=school)
    interaction, page, _ = await consent_page(flow, reg, student, "openid account:read")
    await ask(flow, interaction, page)
    request_id = await _pending_id(flow)
    await sign_in_as(flow, owner)
    csrf = csrf_of((await flow.client.get(PAGE)).text)
    for role in ("lecturer", "student"):
        await sign_in_as(flow, await flow.user(role, school=school))
        for path, data in (
            ("policy", {"policy": "anyone"}),
            ("approve", {"client_id": reg["client_id"], "cover": "all", "request": request_id}),
            ("decline", {"request": request_id}),
        ):
            refused = await flow.client.post(f"{PAGE}/{path}", data={"csrf": csrf, **data})
            assert refused.status_code == 404, (role, path)
        assert (await flow.client.get(f"{PAGE}/decline", params={"request": request_id})).status_code == 404
    await sign_in_as(flow, admin)
    listed = (await flow.client.get(PAGE)).text
    assert "Only the school&#39;s owners may change this" in listed or "Only the school's owners may change" in listed
    refused = await flow.client.post(f"{PAGE}/policy", data={"csrf": csrf_of(listed), "policy": "anyone"})
    assert refused.status_code == 403
    assert await flow.pool.fetchval("SELECT policy FROM authz_school_app_policies") == "approved_only"
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_app_access_requests WHERE decision IS NULL") == 1


async def test_every_form_needs_its_csrf_token(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    interaction, _, _ = await consent_page(flow, reg, student, "openid account:read")
    forged = await flow.client.post(f"{interaction}/ask", data={"csrf": "forged", "reason": "x"})
    assert forged.status_code == 403
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_app_access_requests") == 0
    page = (await flow.client.get(interaction)).text
    await ask(flow, interaction, page)
    request_id = await _pending_id(flow)
    await sign_in_as(flow, owner)
    for path, data in (
        ("policy", {"policy": "anyone"}),
        ("approve", {"client_id": reg["client_id"], "cover": "all", "request": request_id}),
        ("decline", {"request": request_id}),
        ("withdraw", {"client_id": reg["client_id"]}),
    ):
        for csrf in ("", "forged"):
            refused = await flow.client.post(f"{PAGE}/{path}", data={"csrf": csrf, **data})
            assert refused.status_code == 403, (path, csrf)
    assert await flow.pool.fetchval("SELECT policy FROM authz_school_app_policies") == "approved_only"
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_school_app_approvals") == 0
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_app_access_requests WHERE decision IS NULL") == 1


async def test_a_blocked_app_cannot_be_asked_for(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    interaction, page, _ = await consent_page(flow, reg, student, "openid account:read")
    # The owner blocks the app after the consent page opened.
    stores = flow.client.app.state.authz.account_pages  # type: ignore[attr-defined]
    await block(stores, await stores.users.get(owner["id"]), reg["client_id"], ip="127.0.0.1")
    refused = await ask(flow, interaction, page)
    assert refused.status_code == 403
    assert re.search("blocked", refused.text)
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_app_access_requests") == 0


async def _approve_on_page(flow: Flow, client_id: str, **form: str) -> httpx.Response:
    confirm = await flow.client.get(f"{PAGE}/approve", params={"client_id": client_id})
    assert confirm.status_code == 200, confirm.text
    return await flow.client.post(
        f"{PAGE}/approve", data={"csrf": csrf_of(confirm.text), "client_id": client_id, "cover": "all", **form}
    )


async def test_an_owners_approval_is_the_owners_and_withdrawing_it_holds_at_the_next_refresh(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    student = await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Planner", grant_types=["authorization_code", "refresh_token"])
    await sign_in_as(flow, owner)
    assert (await _approve_on_page(flow, reg["client_id"], cover="chosen")).status_code == 400  # no area ticked
    assert (await _approve_on_page(flow, reg["client_id"])).status_code == 303
    assert await flow.pool.fetchval("SELECT approved_by_role FROM authz_school_app_approvals") == "owner"
    flow.client.cookies.clear()
    tokens = await flow.tokens(reg, student, scope="openid account:read")

    await sign_in_as(flow, admin)
    listed = (await flow.client.get(PAGE)).text
    assert "only an owner may withdraw it" in listed
    refused = await flow.client.post(f"{PAGE}/withdraw", data={"csrf": csrf_of(listed), "client_id": reg["client_id"]})
    assert refused.status_code == 403
    assert (await _approve_on_page(flow, reg["client_id"], cover="chosen", scope="account:read")).status_code == 403
    assert await flow.pool.fetchval("SELECT scope FROM authz_school_app_approvals") is None  # unchanged

    await sign_in_as(flow, owner)
    listed = (await flow.client.get(PAGE)).text
    done = await flow.client.post(f"{PAGE}/withdraw", data={"csrf": csrf_of(listed), "client_id": reg["client_id"]})
    assert done.status_code == 303 and await flow.pool.fetchval("SELECT count(*) FROM authz_school_app_approvals") == 0
    refreshed = await Lifecycle(flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error_description"] == NOT_APPROVED


async def test_an_admins_write_that_read_before_an_owners_approval_changes_nothing(flow: Flow) -> None:
    """The race the page's own check cannot close: an admin's approval or withdrawal that
    read the approvals before an owner's approval committed. The write itself leaves an
    owner's approval to owners; an owner's write still replaces it."""
    school = await flow.school("strict")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    reg = await flow.register(client_name="Planner")
    store = flow.client.app.state.authz.account_pages.school_apps  # type: ignore[attr-defined]
    now, client_id = flow.client.app.state.authz.clock.now(), reg["client_id"]  # type: ignore[attr-defined]

    async def approve(person: dict[str, str], role: str, scope: str | None) -> bool:
        return await store.approve(
            school, client_id, client_name="Planner", scope=scope, by=person["id"], role=role, now=now
        )

    assert await approve(admin, "admin", "account:read")  # an admin's approval: an admin may replace it
    assert await approve(admin, "admin", "courses:read")
    assert await approve(owner, "owner", None)  # the owner's, committed first
    assert not await approve(admin, "admin", "account:read")  # the admin's, checked before it: nothing
    assert not await store.withdraw(school, client_id, role="admin")
    row = await flow.pool.fetchrow("SELECT approved_by_role, scope FROM authz_school_app_approvals")
    assert (row["approved_by_role"], row["scope"]) == ("owner", None)
    assert await approve(owner, "owner", "account:read")  # an owner changes an owner's approval
    assert await store.withdraw(school, client_id, role="owner")
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_school_app_approvals") == 0


async def test_a_blocked_app_cannot_be_approved(flow: Flow) -> None:
    school = await flow.school("strict")
    owner = await flow.user("owner", school=school)
    reg = await flow.register(client_name="Blocked Agent")
    stores = flow.client.app.state.authz.account_pages  # type: ignore[attr-defined]
    await block(stores, await stores.users.get(owner["id"]), reg["client_id"], ip="127.0.0.1")
    await sign_in_as(flow, owner)
    assert (await _approve_on_page(flow, reg["client_id"])).status_code == 400
    assert await flow.pool.fetchval("SELECT count(*) FROM authz_school_app_approvals") == 0


async def test_a_steward_who_asks_is_not_mailed_their_own_request(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("strict")
    owner, admin = await flow.user("owner", school=school), await flow.user("admin", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Admin's Helper")
    interaction, page, _ = await consent_page(flow, reg, admin, "openid courses:read")
    assert (await ask(flow, interaction, page, "For the timetable")).status_code == 303
    assert [to for to, _ in await _mail(flow, relay)] == [owner["email"]]
