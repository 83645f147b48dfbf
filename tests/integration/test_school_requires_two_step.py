"""Issue 40: a school's owners may require two-step sign-in (owners and admins, anyone
who may let apps change the school's data, or everyone), on the school's security page,
an event. A person it covers who has no second factor sets one up right after the
password, before any consent page. The admin CLI's reset of a person's second factors."""

from __future__ import annotations

import pyotp
import pytest

from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.protocol.second_factors import covered
from courseschool.common.clock import FrozenClock

from .apps_page import CSRF, browser
from .flow import Flow, pkce_pair
from .test_two_step_sign_in import (  # the codes are computed at the app's frozen clock (_frozen)
    RECOVERY,
    SECRET,
    _frozen,  # noqa: F401
    events,
    person_with_app,
    standalone_sign_in,
)

PAGE = "/oauth/school/security"


async def require(flow: Flow, rule: str) -> None:
    shown = await flow.client.get(PAGE)
    assert shown.status_code == 200, shown.text
    done = await flow.client.post(PAGE, data={"csrf": CSRF.search(shown.text).group(1), "required": rule})
    assert done.status_code == 303 and done.headers["location"] == f"{PAGE}?done=1"


@pytest.mark.parametrize(
    ("rule", "covers"),
    [
        ("none", set()),
        ("staff", {"owner", "admin"}),
        ("approvers", {"owner", "admin", "lecturer"}),
        ("everyone", {"owner", "admin", "lecturer", "student"}),
    ],
)
def test_who_each_requirement_covers(rule: str, covers: set[str]) -> None:
    assert {role for role in ("owner", "admin", "lecturer", "student") if covered(rule, role)} == covers


async def test_only_owners_see_and_change_the_requirement(flow: Flow) -> None:
    school = await flow.school()
    for role in ("admin", "lecturer", "student"):
        async with browser(flow) as other:
            person = await flow.user(role, school=school)
            await standalone_sign_in(other, person, PAGE)
            assert (await other.client.get(PAGE)).status_code == 404, role
            tried = await other.client.post(PAGE, data={"csrf": "0" * 64, "required": "none"})
            assert tried.status_code in (403, 404), role
    owner = await flow.user("owner", school=school)
    assert (await standalone_sign_in(flow, owner, PAGE)).headers["location"] == PAGE
    page = await flow.client.get(PAGE)
    assert 'value="none" checked' in page.text
    forged = await flow.client.post(PAGE, data={"csrf": "0" * 64, "required": "everyone"})
    assert forged.status_code == 403
    await require(flow, "staff")
    assert 'value="staff" checked' in (await flow.client.get(PAGE)).text
    changed = await events(flow, "two_step_required")
    assert [(e["subject"], e["rule"], e["before"]) for e in changed] == [(owner["id"], "staff", "none")]
    bad = await flow.client.post(PAGE, data={"csrf": CSRF.search(page.text).group(1), "required": "some"})
    assert bad.status_code == 400


async def test_an_owner_without_a_second_factor_sets_one_up_before_consent(flow: Flow, clock: FrozenClock) -> None:
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await standalone_sign_in(settings, owner, PAGE)
        await require(settings, "staff")
    student = await flow.user("student", school=school)
    reg = await flow.register()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    assert "cs_session" not in (await flow.login(interaction, owner)).headers.get("set-cookie", "")
    page, csrf = await flow.page(interaction)
    assert "Set up two-step sign-in" in page.text and "asks you to sign in in two steps" in page.text
    assert "/consent" not in page.text
    assert '<svg role="img" aria-label="QR code to set up your authenticator app"' in page.text
    secret = SECRET.search(page.text).group(1).replace(" ", "")
    assert f"secret={secret}" not in page.text  # the URI is only inside the QR code
    wrong = await flow.client.post(f"{interaction}/second-step", data={"csrf": csrf, "code": "000000x"})
    assert "set-cookie" not in wrong.headers
    again, _ = await flow.page(interaction)
    assert (
        "not the one your app shows now" in again.text and SECRET.search(again.text).group(1).replace(" ", "") == secret
    )
    code = pyotp.TOTP(secret).at(clock.now())
    done = await flow.client.post(f"{interaction}/second-step", data={"csrf": csrf, "code": code})
    assert "cs_session=" in done.headers["set-cookie"]
    codes_page, _ = await flow.page(interaction)
    assert len(RECOVERY.findall(codes_page.text)) == 10 and "/consent" not in codes_page.text
    assert f'href="{interaction}"' in codes_page.text
    consent, _ = await flow.page(interaction)  # the codes once; then the consent page
    assert f'action="{interaction}/consent"' in consent.text and not RECOVERY.findall(consent.text)
    assert (await events(flow, "login_succeeded"))[-1]["factor"] == "password+totp"
    async with browser(flow) as theirs:  # a student is not covered by "staff"
        assert (await standalone_sign_in(theirs, student, "/oauth/apps")).headers["location"] == "/oauth/apps"


async def test_the_standalone_sign_in_asks_for_the_set_up_too(flow: Flow, clock: FrozenClock) -> None:
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await standalone_sign_in(settings, owner, PAGE)
        await require(settings, "everyone")
    student = await flow.user("student", school=school)
    first = await standalone_sign_in(flow, student, "/oauth/apps")
    assert first.headers["location"] == "/oauth/signin/second-step?next=%2Foauth%2Fapps"
    page = await flow.client.get(first.headers["location"])
    assert "Set up two-step sign-in" in page.text
    secret = SECRET.search(page.text).group(1).replace(" ", "")
    done = await flow.client.post(
        first.headers["location"],
        data={"csrf": CSRF.search(page.text).group(1), "code": pyotp.TOTP(secret).at(clock.now())},
    )
    assert done.headers["location"] == "/oauth/security/codes?next=%2Foauth%2Fapps"
    codes = await flow.client.get(done.headers["location"])
    assert len(RECOVERY.findall(codes.text)) == 10 and 'href="/oauth/apps"' in codes.text


async def test_the_admin_reset_forgets_the_second_factors(flow: Flow) -> None:
    user, _, _ = await person_with_app(flow)
    admin = AdminService(flow.client.app.state.authz.administration)  # type: ignore[attr-defined]
    answer = await admin.reset_second_factors(user["email"])
    assert answer["removed"] == {"totp": 1, "recovery_codes": 10, "passkeys": 0}
    assert await flow.count(f"authz_totp WHERE user_id = '{user['id']}'") == 0
    reset = await events(flow, "second_factors_reset")
    assert reset[0]["subject"] == user["id"]
    kind = await flow.pool.fetchval("SELECT kind FROM authz_events WHERE action = 'second_factors_reset'")
    assert kind == "security"
    async with browser(flow) as own:  # the password alone again
        assert (await standalone_sign_in(own, user)).headers["location"] == "/oauth/security"
