"""Issue 40 item 5: a school's owner invites people from the school's people page
(/oauth/school/people): the same use case as `admin users invite` (endpoints/invitations.py),
a single-use link by e-mail where the person chooses a password and is signed in. Only
the school's own owners, to their own school, as admin, lecturer or student (the admin
CLI alone makes owners); bound to the session's CSRF token; after a recent sign-in;
rate-limited; an event `user_invited` naming the owner and their address. An address of
the school's people is refused saying so; one of another school's gets the answer an
invitation gets, and nothing is created or sent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from ..support.smtp import SmtpRelay
from .apps_page import CSRF, browser, text
from .flow import Flow
from .mailbox import deliver, link_in, mailed_app, open_link, sign_in, text_of
from .test_invitations import CHOSEN, signs_in

PAGE = "/oauth/school/people"


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    async with mailed_app(
        authz_settings, clean_db, redis_client, clock, rate_invitations_per_owner="4/3600"
    ) as running:
        yield running


async def invite(flow: Flow, **fields: str) -> Any:
    """The page's form as the signed-in browser sends it (its own CSRF token unless given)."""
    if "csrf" not in fields:
        shown = await flow.client.get(PAGE)
        assert shown.status_code == 200, shown.text
        fields["csrf"] = CSRF.search(shown.text).group(1)
    return await flow.client.post(PAGE, data=fields)


async def people(flow: Flow) -> set[str]:
    return {r["email"] for r in await flow.pool.fetch("SELECT email FROM authz_users")}


async def kept(flow: Flow, action: str) -> list[dict[str, Any]]:
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    rows = await flow.pool.fetch(
        "SELECT actor, source, subject::text, details FROM authz_events WHERE action = $1 ORDER BY id", action
    )
    return [{"actor": r["actor"], "source": r["source"], "subject": r["subject"], **(r["details"] or {})} for r in rows]


async def test_an_owner_invites_and_the_link_signs_the_person_in(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("riverside")
    owner = await flow.user("owner", school=school)
    await sign_in(flow, owner)
    shown = await flow.client.get(PAGE)
    assert shown.status_code == 200 and "Invitations not taken up yet" in shown.text
    assert 'value="owner"' not in shown.text and "Only the platform's administrators make owners" in shown.text

    done = await invite(flow, email="ada@example.test", name="Ada  Lovelace", role="lecturer")
    assert done.status_code == 303 and done.headers["location"] == f"{PAGE}?done=invited"
    listed = text((await flow.client.get(done.headers["location"])).text)
    assert "The invitation is on its way" in listed
    assert "Ada Lovelace ada@example.test lecturer" in listed  # who, as what, then when sent and until when
    invitee = await flow.pool.fetchrow(
        "SELECT id::text, school_id::text, role FROM authz_users WHERE email = 'ada@example.test'"
    )
    assert (invitee["school_id"], invitee["role"]) == (school, "lecturer")
    [event] = await kept(flow, "user_invited")
    assert (event["actor"], event["subject"], event["invitee"], event["role"]) == (
        "user",
        owner["id"],
        invitee["id"],
        "lecturer",
    )
    assert event["source"] == "127.0.0.1"

    assert await deliver(flow) == 1
    message = relay.accepted[0].message
    assert message["To"].endswith("ada@example.test>") or message["To"] == "ada@example.test"
    assert "Hello Ada Lovelace" in text_of(message)
    token = link_in(message)
    async with browser(flow) as newcomer:
        chosen = await open_link(newcomer, token)  # the token held for this browser, out of the URL
        found = CSRF.search(chosen.text)
        assert found, chosen.text
        set_it = await newcomer.client.post(
            "/oauth/password/choose", data={"csrf": found.group(1), "password": CHOSEN, "again": CHOSEN}
        )
        assert set_it.status_code == 303 and set_it.headers["location"] == "/oauth/account?done=welcome"
    assert await signs_in(flow, "ada@example.test", CHOSEN)
    assert "ada@example.test" not in (await flow.client.get(PAGE)).text  # taken up: no longer pending


async def test_only_the_schools_owners_may_invite(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    school = await flow.school("riverside")
    for role in ("admin", "lecturer", "student"):
        async with browser(flow) as other:
            await sign_in(other, await flow.user(role, school=school))
            assert (await other.client.get(PAGE)).status_code == 404, role
            tried = await other.client.post(
                PAGE, data={"csrf": "0" * 64, "email": f"by-{role}@example.test", "name": "X", "role": "student"}
            )
            assert tried.status_code in (403, 404), role
    async with browser(flow) as nobody:
        assert (await nobody.client.get(PAGE)).headers["location"].startswith("/oauth/signin")
    assert not {e for e in await people(flow) if e.startswith("by-")}
    assert await deliver(flow) == 0


async def test_an_owner_invites_to_their_own_school_and_sees_only_its_invitations(
    mailed: tuple[Flow, SmtpRelay],
) -> None:
    flow, _ = mailed
    riverside, hillside = await flow.school("riverside"), await flow.school("hillside")
    await sign_in(flow, await flow.user("owner", school=riverside))
    assert (await invite(flow, email="river@example.test", name="River", role="student")).status_code == 303
    async with browser(flow) as other:
        await sign_in(other, await flow.user("owner", school=hillside))
        page = await other.client.get(PAGE)
        assert "river@example.test" not in page.text
        # A form field can't name the school: the invitation is to the owner's own.
        done = await invite(other, email="hill@example.test", name="Hill", role="admin", school=riverside)
        assert done.status_code == 303
    schools = dict(await flow.pool.fetch("SELECT email, school_id::text FROM authz_users WHERE email LIKE '%l@%'"))
    assert schools == {"hill@example.test": hillside}


async def test_refusals_change_nothing(mailed: tuple[Flow, SmtpRelay], clock: FrozenClock) -> None:
    flow, _ = mailed
    school = await flow.school("riverside")
    owner = await flow.user("owner", school=school)
    colleague = await flow.user("lecturer", school=school)
    await sign_in(flow, owner)
    before = await people(flow)

    forged = await invite(flow, csrf="0" * 64, email="x@example.test", name="X", role="student")
    assert forged.status_code == 403
    for role in ("owner", "wizard", ""):
        bad = await invite(flow, email="x@example.test", name="X", role=role)
        assert bad.status_code == 400 and "only the platform&#39;s administrators make owners" in bad.text, role
        assert 'value="x@example.test"' in bad.text  # what was typed, kept
    bad_address = await invite(flow, email="not an address", name="X", role="student")
    assert bad_address.status_code == 400 and "e-mail address" in bad_address.text
    taken = await invite(flow, email=colleague["email"].upper(), name="X", role="student")
    assert taken.status_code == 409 and "is already one of the school&#39;s people" in taken.text
    assert await people(flow) == before
    assert await kept(flow, "user_invited") == []

    csrf = CSRF.search((await flow.client.get(PAGE)).text).group(1)
    clock.advance(301)  # past RECENT_SIGN_IN: confirm it is you first, then back here
    late = await invite(flow, csrf=csrf, email="late@example.test", name="Late", role="student")
    assert (
        late.status_code == 303 and late.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fschool%2Fpeople"
    )
    assert (await flow.client.get(PAGE)).headers["location"] == late.headers["location"]
    assert await people(flow) == before and await deliver(flow) == 0


async def test_another_schools_address_gets_the_same_answer_and_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    riverside, hillside = await flow.school("riverside"), await flow.school("hillside")
    elsewhere = await flow.user("student", school=hillside)
    owner = await flow.user("owner", school=riverside)
    await sign_in(flow, owner)
    done = await invite(flow, email=elsewhere["email"], name="Someone", role="admin")
    assert done.status_code == 303 and done.headers["location"] == f"{PAGE}?done=invited"
    assert await flow.pool.fetchval(
        "SELECT school_id::text || role FROM authz_users WHERE id = $1::uuid", elsewhere["id"]
    ) == (hillside + "student")
    assert await deliver(flow) == 0
    assert await kept(flow, "user_invited") == []
    [refused] = await kept(flow, "user_invite_refused")
    assert (refused["subject"], refused["invitee"], refused["reason"]) == (owner["id"], elsewhere["id"], "elsewhere")


async def test_inviting_again_sends_a_new_link_and_the_rate_is_bounded(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("riverside")
    await sign_in(flow, await flow.user("owner", school=school))
    for _ in range(2):
        assert (await invite(flow, email="again@example.test", name="Again", role="student")).status_code == 303
    assert await deliver(flow) == 2
    first, second = (link_in(m.message) for m in relay.accepted)
    assert first != second
    async with browser(flow) as newcomer:
        assert "Choose your password" not in (await open_link(newcomer, first)).text
        assert "Choose your password" in (await open_link(newcomer, second)).text
    assert text((await flow.client.get(PAGE)).text).count("again@example.test") == 1
    for n in range(2):  # RATE_INVITATIONS_PER_OWNER is 4 an hour here
        assert (await invite(flow, email=f"more{n}@example.test", name="M", role="student")).status_code == 303
    slowed = await invite(flow, email="one-too-many@example.test", name="M", role="student")
    assert slowed.status_code == 429
    assert "one-too-many@example.test" not in await people(flow)
