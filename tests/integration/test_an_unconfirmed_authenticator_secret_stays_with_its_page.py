"""Review finding 2: an authenticator app begun and never confirmed kept its secret for
the next set-up, whoever began it; so someone who knew the password could plant the
person's second factor. Now the secret is offered again only to the page (the session,
the sign-in) that began it, for a few minutes; a new password forgets it, and
housekeeping removes what was left behind."""

from __future__ import annotations

from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.maintenance import housekeeping
from courseschool.authz.storage.second_step import ENROL_TTL
from courseschool.common.clock import FrozenClock

from .apps_page import CSRF, browser
from .flow import Flow, pkce_pair
from .test_school_requires_two_step import require
from .test_two_step_sign_in import SECRET, _frozen, enrol_on_security_page, standalone_sign_in  # noqa: F401


async def _shown(flow: Flow) -> str:
    page = await flow.client.get("/oauth/security/totp")
    assert page.status_code == 200, page.text
    return SECRET.search(page.text).group(1).replace(" ", "")


async def test_an_unconfirmed_authenticator_secret_is_not_offered_to_the_next_sign_in(
    flow: Flow, clock: FrozenClock
) -> None:
    """Someone who knows the password opens the set-up page and leaves; days later the
    person sets up their app: a secret of their own."""
    victim = await flow.user("student")
    async with browser(flow) as attacker:
        await standalone_sign_in(attacker, victim)
        planted = await _shown(attacker)
    clock.advance(7 * 24 * 3600)
    async with browser(flow) as own:
        await standalone_sign_in(own, victim)
        secret, _ = await enrol_on_security_page(own)
    assert secret != planted


async def test_another_browser_at_the_same_time_gets_another_secret(flow: Flow) -> None:
    person = await flow.user("student")
    async with browser(flow) as first, browser(flow) as second:
        await standalone_sign_in(first, person)
        await standalone_sign_in(second, person)
        one = await _shown(first)
        assert await _shown(first) == one  # the same page, again: the same secret
        other = await _shown(second)
        assert other != one
        assert await _shown(first) not in (one, other)  # the first one's is gone too


async def test_the_same_page_a_few_minutes_later_gets_a_new_secret(flow: Flow) -> None:
    person = await flow.user("student")
    async with browser(flow) as mine:
        await standalone_sign_in(mine, person)
        first = await _shown(mine)
        held = f"authz:totp-enrolling:{person['id']}"
        assert 0 < await flow.redis.ttl(held) <= ENROL_TTL
        await flow.redis.delete(held)  # what Redis's own clock does at ENROL_TTL
        assert await _shown(mine) != first


async def test_a_new_password_forgets_an_unconfirmed_app(flow: Flow) -> None:
    person = await flow.user("student")
    async with browser(flow) as someone:
        await standalone_sign_in(someone, person)
        await _shown(someone)
    assert await flow.count(f"authz_totp WHERE user_id = '{person['id']}' AND confirmed_at IS NULL") == 1
    await AdminService(flow.client.app.state.authz.administration).reset_password(person["email"], "a new passphrase")
    assert await flow.count("authz_totp") == 0


async def test_changing_the_password_forgets_an_unconfirmed_app(flow: Flow) -> None:
    person = await flow.user("student")
    async with browser(flow) as mine:
        await standalone_sign_in(mine, person)
        await _shown(mine)
        page = await mine.client.get("/oauth/account")
        csrf = CSRF.search(page.text).group(1)
        form = {"csrf": csrf, "password": "a brand new passphrase", "again": "a brand new passphrase"}
        changed = await mine.client.post("/oauth/account/password", data=form)
        assert changed.status_code == 303 and changed.headers["location"] == "/oauth/account?done=password"
    assert await flow.count("authz_totp") == 0


async def test_a_confirmed_app_survives_a_new_password(flow: Flow) -> None:
    person = await flow.user("student")
    async with browser(flow) as mine:
        await standalone_sign_in(mine, person)
        await enrol_on_security_page(mine)
    await AdminService(flow.client.app.state.authz.administration).reset_password(person["email"], "a new passphrase")
    assert await flow.count("authz_totp WHERE confirmed_at IS NOT NULL") == 1


async def test_housekeeping_removes_unconfirmed_apps_an_hour_old(flow: Flow) -> None:
    left, fresh, done = await flow.user("student"), await flow.user("student"), await flow.user("student")
    for person, enrol in ((left, False), (fresh, False), (done, True)):
        async with browser(flow) as b:
            await standalone_sign_in(b, person)
            await (enrol_on_security_page(b) if enrol else _shown(b))
    await flow.pool.execute(
        "UPDATE authz_totp SET created_at = created_at - interval '2 hours' WHERE user_id <> $1::uuid", fresh["id"]
    )
    assert (await housekeeping(flow.client.app.state.authz))["unconfirmed_totp"] == 1
    kept = {str(r["user_id"]) for r in await flow.pool.fetch("SELECT user_id FROM authz_totp")}
    assert kept == {fresh["id"], done["id"]}


async def _enrolment_secret(flow: Flow, person: dict[str, str]) -> str:
    """The secret the standalone sign-in's required set-up shows (no session yet)."""
    first = await standalone_sign_in(flow, person, "/oauth/apps")
    page = await flow.client.get(first.headers["location"])
    assert "Set up two-step sign-in" in page.text, page.text
    return SECRET.search(page.text).group(1).replace(" ", "")


async def test_the_sign_ins_required_set_up_is_bound_to_that_sign_in(flow: Flow) -> None:
    """Where the school requires two steps, the set-up comes between the password and
    the session: whoever knew the password reached it without one."""
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await standalone_sign_in(settings, owner, "/oauth/school/security")
        await require(settings, "everyone")
    student = await flow.user("student", school=school)
    async with browser(flow) as attacker:
        planted = await _enrolment_secret(attacker, student)
    async with browser(flow) as own:
        assert await _enrolment_secret(own, student) != planted
    # Through an app's sign-in (the interaction's step) too.
    reg = await flow.register()
    _, challenge = pkce_pair()
    async with browser(flow) as attacker:
        start = await attacker.start(attacker.authorize_params(reg, challenge))
        await attacker.login(start.headers["location"], student)
        page, _ = await attacker.page(start.headers["location"])
        planted = SECRET.search(page.text).group(1).replace(" ", "")
        again, _ = await attacker.page(start.headers["location"])
        assert SECRET.search(again.text).group(1).replace(" ", "") == planted  # the same step: the same secret
    async with browser(flow) as own:
        assert await _enrolment_secret(own, student) != planted
