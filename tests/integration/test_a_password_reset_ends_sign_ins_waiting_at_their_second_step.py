"""A sign-in stopped at its second step (the password was right; a code, a passkey, or
the factor the school requires is awaited) stands only while that password is still the
person's: after a reset, whoever typed the old one cannot finish it, on the
interaction's pages or on the standalone sign-in page. The standalone step's lifetime is
fixed when it begins: wrong codes do not stretch it."""

from __future__ import annotations

import hashlib

import pyotp

from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.endpoints.signin import MAX_FAILURES, TOO_MANY_CODES, restart_reason, second_step
from courseschool.authz.endpoints.waiting_step import SIGN_IN_AGAIN
from courseschool.authz.storage.second_step import SecondStep
from courseschool.common.clock import FrozenClock

from .apps_page import CSRF, browser
from .flow import Flow, pkce_pair
from .mailbox import components
from .test_school_requires_two_step import PAGE, require
from .test_two_step_sign_in import (
    SECRET,
    _frozen,  # noqa: F401  (the app's clock, which codes are computed at)
    code_at,
    person_with_app,
    sessions,
    standalone_sign_in,
    to_second_step,
)


async def _reset_password(flow: Flow, user_id: str) -> None:
    admin = AdminService(components(flow).administration, actor="admin-cli", source="tester@host")
    await admin.reset_password(user_id)


async def _owner_at_set_up(flow: Flow) -> tuple[dict[str, str], str]:
    """An owner the school requires two steps of, who has none, and an authorization
    request signed in with their password: its set-up step awaited."""
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await standalone_sign_in(settings, owner, PAGE)
        await require(settings, "staff")
    reg = await flow.register()
    _, challenge = pkce_pair()
    interaction = (await flow.start(flow.authorize_params(reg, challenge))).headers["location"]
    await flow.login(interaction, owner)
    return owner, interaction


async def test_a_pending_enrolment_cannot_finish_after_a_reset(flow: Flow, clock: FrozenClock) -> None:
    owner, interaction = await _owner_at_set_up(flow)  # whoever had the old password: the set-up awaited
    page, csrf = await flow.page(interaction)
    secret = SECRET.search(page.text).group(1).replace(" ", "")  # type: ignore[union-attr]
    await _reset_password(flow, owner["id"])  # the account is recovered
    before = await sessions(flow)
    page, csrf = await flow.page(interaction)
    assert f'action="{interaction}/login"' in page.text and SIGN_IN_AGAIN in page.text
    assert not SECRET.search(page.text)
    done = await flow.client.post(
        f"{interaction}/second-step", data={"csrf": csrf, "code": pyotp.TOTP(secret).at(clock.now())}
    )
    assert done.status_code == 400 and "cs_session=" not in done.headers.get("set-cookie", "")
    assert await sessions(flow) == before
    assert await flow.count(f"authz_totp WHERE user_id = '{owner['id']}' AND confirmed_at IS NOT NULL") == 0


async def test_a_pending_code_cannot_finish_after_a_reset(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    reg = await flow.register()
    interaction, csrf = await to_second_step(flow, reg, user)
    await _reset_password(flow, user["id"])
    before = await sessions(flow)
    done = await flow.client.post(f"{interaction}/second-step", data={"csrf": csrf, "code": code_at(secret, flow)})
    assert done.status_code == 400 and "cs_session=" not in done.headers.get("set-cookie", "")
    assert await sessions(flow) == before
    page, _ = await flow.page(interaction)
    assert f'action="{interaction}/login"' in page.text and SIGN_IN_AGAIN in page.text


async def test_the_standalone_step_cannot_finish_after_a_reset(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    first = await standalone_sign_in(flow, user, "/oauth/apps")
    step_url = first.headers["location"]
    step = await flow.client.get(step_url)
    csrf = CSRF.search(step.text).group(1)  # type: ignore[union-attr]
    await _reset_password(flow, user["id"])
    before = await sessions(flow)
    again = (await flow.client.get(step_url)).headers["location"]
    assert again.startswith("/oauth/signin?")
    page = await flow.client.get(again)  # the password is asked again, and the page says why
    assert SIGN_IN_AGAIN in page.text and TOO_MANY_CODES not in page.text
    done = await flow.client.post(step_url, data={"csrf": csrf, "code": code_at(secret, flow)})
    assert done.headers["location"].startswith("/oauth/signin?")
    assert "cs_session=" not in done.headers.get("set-cookie", "")
    assert await sessions(flow) == before


async def test_a_step_that_ends_while_its_code_is_checked_says_why(flow: Flow) -> None:
    """The step stood when the form came in and ended before the code was checked (the
    reset lands in between): the password is asked again, for that reason, not as if too
    many wrong codes had been typed."""
    user, secret, _ = await person_with_app(flow)
    step = SecondStep(user_id=user["id"], what="verify", credential="a credential since replaced")
    pages = components(flow).sign_in_pages
    assert await second_step(pages, step, code_at(secret, flow), ip="127.0.0.1", agent=None, client_id=None) is None
    assert step.ended and restart_reason(step) == SIGN_IN_AGAIN
    wrong = SecondStep(user_id=user["id"], what="verify", credential=await _credential(flow, user["id"]))
    for _ in range(MAX_FAILURES):
        assert await second_step(pages, wrong, "000000", ip="127.0.0.1", agent=None, client_id=None) is None
    assert not wrong.ended and restart_reason(wrong) == TOO_MANY_CODES


async def _credential(flow: Flow, user_id: str) -> str:
    return await components(flow).sign_in_pages.users.credential(user_id) or ""


async def test_wrong_codes_do_not_stretch_the_standalone_step(flow: Flow) -> None:
    user, _, _ = await person_with_app(flow)
    first = await standalone_sign_in(flow, user, "/oauth/apps")
    step = await flow.client.get(first.headers["location"])
    csrf = CSRF.search(step.text).group(1)  # type: ignore[union-attr]
    binding = flow.client.cookies["cs_signin"]
    key = "authz:second-step:" + hashlib.sha256(binding.encode()).hexdigest()
    await flow.redis.expire(key, 100)  # whatever was left of its time
    wrong = await flow.client.post(first.headers["location"], data={"csrf": csrf, "code": "000000"})
    assert wrong.headers["location"].endswith("failed=code")
    assert 0 < await flow.redis.ttl(key) <= 100


async def test_a_pending_enrolment_cannot_finish_once_the_person_has_a_factor(flow: Flow, clock: FrozenClock) -> None:
    """Once the person sets up an app in their own browser, a set-up begun elsewhere with
    their password adds nothing and opens no session. For the app this already held (its
    secret is the page's own); the passkey case of the same rule (third review, 28 Nov
    2026, low 2) is in test_passkey_meets_the_two_step_requirement.py."""
    owner, interaction = await _owner_at_set_up(flow)  # someone else with the password: the set-up awaited
    page, csrf = await flow.page(interaction)
    theirs = SECRET.search(page.text).group(1).replace(" ", "")  # type: ignore[union-attr]
    async with browser(flow) as own:  # the person, in their own browser, sets up their app
        step = await own.client.get((await standalone_sign_in(own, owner, PAGE)).headers["location"])
        mine = SECRET.search(step.text).group(1).replace(" ", "")  # type: ignore[union-attr]
        done = await own.client.post(
            "/oauth/signin/second-step",
            params={"next": PAGE},
            data={"csrf": CSRF.search(step.text).group(1), "code": pyotp.TOTP(mine).at(clock.now())},  # type: ignore[union-attr]
        )
        assert done.status_code == 303 and "cs_session=" in done.headers.get("set-cookie", ""), done.text
    before = await sessions(flow)
    done = await flow.client.post(
        f"{interaction}/second-step", data={"csrf": csrf, "code": pyotp.TOTP(theirs).at(clock.now())}
    )
    assert "cs_session=" not in done.headers.get("set-cookie", "")
    assert await sessions(flow) == before
    assert await flow.count(f"authz_totp WHERE user_id = '{owner['id']}' AND confirmed_at IS NOT NULL") == 1
