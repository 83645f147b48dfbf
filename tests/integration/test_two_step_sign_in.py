"""Issue 40: two-step sign-in with an authenticator app (TOTP, RFC 6238) and recovery
codes, on the login page of an authorization request and on the standalone sign-in page:
after the password, the code; a code works once; a recovery code once; the lockout
counts wrong codes as it counts wrong passwords; every form refuses a token not of its
page; the sign-in event says which factor was used."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pyotp
import pytest

from courseschool.authz.app import create_app
from courseschool.common.clock import FrozenClock

from .apps_page import CSRF, browser
from .conftest import serve
from .flow import PASSWORD, Flow, pkce_pair
from .sign_in import with_settings

SECRET = re.compile(r'<code class="secret"[^>]*>([A-Z2-7 ]+)</code>')
RECOVERY = re.compile(r"<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>")


_CLOCK: list[FrozenClock] = []


@pytest.fixture(autouse=True)
def _frozen(clock: FrozenClock) -> Iterator[None]:
    """The app's frozen clock, which the codes are computed at."""
    _CLOCK.append(clock)
    yield
    _CLOCK.clear()


def clock_of(_: Flow) -> FrozenClock:
    return _CLOCK[-1]


def code_at(secret: str, flow: Flow) -> str:
    return pyotp.TOTP(secret).at(clock_of(flow).now())


async def standalone_sign_in(flow: Flow, user: dict[str, str], next_page: str = "/oauth/security") -> httpx.Response:
    shown = await flow.client.get("/oauth/signin", params={"next": next_page})
    csrf = CSRF.search(shown.text).group(1)
    return await flow.client.post(
        "/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": PASSWORD, "next": next_page}
    )


async def enrol_on_security_page(flow: Flow) -> tuple[str, list[str]]:
    """Set up an authenticator app on the signed-in person's security page: its secret
    (read from the page, as a person types it) and the recovery codes shown."""
    shown = await flow.client.get("/oauth/security/totp")
    assert shown.status_code == 200, shown.text
    secret = SECRET.search(shown.text).group(1).replace(" ", "")
    csrf = CSRF.search(shown.text).group(1)
    done = await flow.client.post("/oauth/security/totp", data={"csrf": csrf, "code": code_at(secret, flow)})
    assert done.status_code == 303 and done.headers["location"] == "/oauth/security/codes?new=1", done.text
    codes_page = await flow.client.get(done.headers["location"])
    codes = RECOVERY.findall(codes_page.text)
    assert len(codes) == 10 and len(set(codes)) == 10
    return secret, codes


async def person_with_app(flow: Flow, role: str = "owner") -> tuple[dict[str, str], str, list[str]]:
    """A person who set up an authenticator app in their own browser (then signed out)."""
    user = await flow.user(role)
    async with browser(flow) as own:
        signed = await standalone_sign_in(own, user)
        assert signed.headers["location"] == "/oauth/security", signed.text
        secret, codes = await enrol_on_security_page(own)
    clock_of(flow).advance(30)  # the enrolment's code is spent; the next step's is new
    return user, secret, codes


async def to_second_step(flow: Flow, reg: dict[str, Any], user: dict[str, str]) -> tuple[str, str]:
    """An authorization request, the password: the interaction's address and its page's token."""
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    done = await flow.login(interaction, user)
    assert done.status_code == 303
    page, csrf = await flow.page(interaction)
    assert "Two-step sign-in" in page.text and f'action="{interaction}/second-step"' in page.text, page.text
    return interaction, csrf


async def send_code(flow: Flow, interaction: str, csrf: str, code: str) -> httpx.Response:
    return await flow.client.post(f"{interaction}/second-step", data={"csrf": csrf, "code": code})


async def sessions(flow: Flow) -> int:
    return await flow.count("authz_login_sessions WHERE ended_at IS NULL")


async def events(flow: Flow, action: str) -> list[dict[str, Any]]:
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    rows = await flow.pool.fetch(
        "SELECT subject::text, details FROM authz_events WHERE action = $1 ORDER BY id", action
    )
    return [{"subject": r["subject"], **(r["details"] or {})} for r in rows]


async def test_after_the_password_the_code_then_consent(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    reg = await flow.register()
    before = await sessions(flow)
    interaction, csrf = await to_second_step(flow, reg, user)
    assert await sessions(flow) == before  # the password alone opened no session
    done = await send_code(flow, interaction, csrf, code_at(secret, flow))
    assert done.status_code == 303 and "cs_session=" in done.headers["set-cookie"]
    consent, _ = await flow.page(interaction)
    assert 'action="' + interaction + '/consent"' in consent.text
    factors = [e.get("factor") for e in await events(flow, "login_succeeded") if e["subject"] == user["id"]]
    assert factors[-1] == "password+totp"
    assert await events(flow, "login_password_accepted")


async def test_the_secret_is_stored_sealed_and_never_logged(flow: Flow) -> None:
    user, secret, codes = await person_with_app(flow)
    stored = await flow.pool.fetchval("SELECT secret FROM authz_totp WHERE user_id = $1::uuid", user["id"])
    assert secret.encode() not in stored and secret.lower().encode() not in stored
    hashes = await flow.pool.fetch("SELECT code_hash FROM authz_recovery_codes WHERE user_id = $1::uuid", user["id"])
    assert len(hashes) == 10 and all(len(h["code_hash"]) == 32 for h in hashes)
    await flow.client.app.state.authz.events.flush()  # type: ignore[attr-defined]
    recorded = " ".join(str(r["details"]) for r in await flow.pool.fetch("SELECT details FROM authz_events"))
    assert secret not in recorded and not any(c in recorded for c in codes)


async def test_a_code_is_accepted_once(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    reg = await flow.register()
    code = code_at(secret, flow)
    interaction, csrf = await to_second_step(flow, reg, user)
    assert "cs_session=" in (await send_code(flow, interaction, csrf, code)).headers.get("set-cookie", "")
    async with browser(flow) as other:  # the same code again, elsewhere, within its 30 seconds
        interaction, csrf = await to_second_step(other, reg, user)
        again = await send_code(other, interaction, csrf, code)
        assert "set-cookie" not in again.headers
        page, _ = await other.page(interaction)
        assert "That code is not right, or was used already" in page.text
        clock_of(flow).advance(30)
        later = await send_code(other, interaction, csrf, code_at(secret, flow))
        assert "cs_session=" in later.headers["set-cookie"]


async def test_a_recovery_code_works_once(flow: Flow) -> None:
    user, _, codes = await person_with_app(flow)
    reg = await flow.register()
    interaction, csrf = await to_second_step(flow, reg, user)
    used = await send_code(flow, interaction, csrf, codes[3].upper().replace("-", " "))  # as a person may type it
    assert "cs_session=" in used.headers["set-cookie"]
    assert [e["left"] for e in await events(flow, "recovery_code_used")] == [9]
    assert (await events(flow, "login_succeeded"))[-1]["factor"] == "password+recovery_code"
    async with browser(flow) as other:
        interaction, csrf = await to_second_step(other, reg, user)
        assert "set-cookie" not in (await send_code(other, interaction, csrf, codes[3])).headers
        assert "cs_session=" in (await send_code(other, interaction, csrf, codes[4])).headers["set-cookie"]


@pytest.fixture
async def three_strikes(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:  # type: ignore[no-untyped-def]
    async with serve(create_app(with_settings(authz_settings, login_lockout_threshold=3), clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_codes_guessed_past_the_lockout_are_refused_even_the_right_one(three_strikes: Flow) -> None:
    """A wrong code counts at the account as a wrong password does: past the threshold
    the address is locked out, and then neither the right code nor the password opens a
    session."""
    flow = three_strikes
    user, secret, _ = await person_with_app(flow)
    reg = await flow.register()
    interaction, csrf = await to_second_step(flow, reg, user)
    right = code_at(secret, flow)
    wrong = [f"{n:06d}" for n in range(10) if f"{n:06d}" != right][:3]
    answers = [(await send_code(flow, interaction, csrf, guess)).status_code for guess in wrong]
    assert answers == [303, 303, 303]
    refused = await send_code(flow, interaction, csrf, right)
    assert refused.status_code == 429 and "Too many attempts" in refused.text
    assert "set-cookie" not in refused.headers
    password_again = await flow.login(interaction, user)
    assert password_again.status_code == 429
    assert len(await events(flow, "second_factor_failed")) == 3
    assert any(e["rule"] == "address_at_account" for e in await events(flow, "account_locked"))
    assert await sessions(flow) == 1  # only the enrolment's own sign-in


async def test_too_many_wrong_codes_ask_for_the_password_again(flow: Flow) -> None:
    user, _, _ = await person_with_app(flow)
    reg = await flow.register()
    interaction, csrf = await to_second_step(flow, reg, user)
    for _ in range(5):
        await send_code(flow, interaction, csrf, "not a code")
    page, _ = await flow.page(interaction)
    assert "Too many wrong codes. Sign in again with your password." in page.text
    assert f'action="{interaction}/login"' in page.text


async def test_the_standalone_sign_in_asks_for_the_code_too(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    first = await standalone_sign_in(flow, user, "/oauth/apps")
    assert first.status_code == 303 and first.headers["location"] == "/oauth/signin/second-step?next=%2Foauth%2Fapps"
    assert "cs_session" not in first.headers.get("set-cookie", "")
    step = await flow.client.get(first.headers["location"])
    csrf = CSRF.search(step.text).group(1)
    wrong = await flow.client.post(first.headers["location"], data={"csrf": csrf, "code": "000000"})
    assert wrong.headers["location"].endswith("failed=code")
    assert "was used already" in (await flow.client.get(wrong.headers["location"])).text
    done = await flow.client.post(first.headers["location"], data={"csrf": csrf, "code": code_at(secret, flow)})
    assert done.headers["location"] == "/oauth/apps" and "cs_session=" in done.headers["set-cookie"]


async def test_every_second_step_form_refuses_a_token_not_of_its_page(flow: Flow) -> None:
    user, secret, _ = await person_with_app(flow)
    reg = await flow.register()
    interaction, _ = await to_second_step(flow, reg, user)
    for token in ("", "0" * 43):
        forged = await send_code(flow, interaction, token, code_at(secret, flow))
        assert forged.status_code == 403
    first = await standalone_sign_in(flow, user, "/oauth/apps")
    for token in ("", "0" * 64):
        forged = await flow.client.post(first.headers["location"], data={"csrf": token, "code": code_at(secret, flow)})
        assert forged.status_code == 403
    async with browser(flow) as other:  # no sign-in cookie at all
        bare = await other.client.post(first.headers["location"], data={"csrf": "0" * 64, "code": "123456"})
        assert bare.status_code == 403
    assert await sessions(flow) == 1  # only the enrolment's own sign-in


async def test_the_security_page_forms_refuse_a_token_not_of_its_page(flow: Flow) -> None:
    user, _, _ = await person_with_app(flow)
    signed = await standalone_sign_in(flow, user)
    assert signed.headers["location"].startswith("/oauth/signin/second-step")  # not signed in by the password
    async with browser(flow) as own:
        plain = await flow.user("lecturer")
        await standalone_sign_in(own, plain)
        for path in ("/oauth/security/totp", "/oauth/security/remove-totp", "/oauth/security/renew-codes"):
            forged = await own.client.post(path, data={"csrf": "0" * 64, "code": "123456"})
            assert forged.status_code == 403, path
        page = await own.client.get("/oauth/security")
        assert "Set up an authenticator app" in page.text


async def test_removing_the_app_and_renewing_codes_each_confirmed(flow: Flow) -> None:
    user, secret, codes = await person_with_app(flow)
    first = await standalone_sign_in(flow, user)
    step = await flow.client.get(first.headers["location"])
    done = await flow.client.post(
        first.headers["location"], data={"csrf": CSRF.search(step.text).group(1), "code": codes[0]}
    )
    assert done.headers["location"] == "/oauth/security"
    confirm = await flow.client.get("/oauth/security/confirm?action=renew-codes")
    assert "Make new recovery codes?" in confirm.text and "the 9 you have left stop working" in confirm.text
    renewed = await flow.client.post("/oauth/security/renew-codes", data={"csrf": CSRF.search(confirm.text).group(1)})
    new_codes = RECOVERY.findall((await flow.client.get(renewed.headers["location"])).text)
    assert len(new_codes) == 10 and not set(new_codes) & set(codes)
    assert (await flow.client.get("/oauth/security/codes")).status_code == 303  # shown once
    confirm = await flow.client.get("/oauth/security/confirm?action=remove-totp")
    assert "Remove your authenticator app?" in confirm.text
    removed = await flow.client.post("/oauth/security/remove-totp", data={"csrf": CSRF.search(confirm.text).group(1)})
    assert removed.headers["location"] == "/oauth/security?done=removed"
    assert await flow.count(f"authz_totp WHERE user_id = '{user['id']}'") == 0
    assert await flow.count(f"authz_recovery_codes WHERE user_id = '{user['id']}'") == 0
    assert [e["factor"] for e in await events(flow, "second_factor_removed")] == ["totp"]
    async with browser(flow) as other:  # the password alone again
        assert (await standalone_sign_in(other, user)).headers["location"] == "/oauth/security"
    assert secret


async def test_a_wrong_enrolment_code_changes_nothing(flow: Flow) -> None:
    user = await flow.user()
    await standalone_sign_in(flow, user)
    shown = await flow.client.get("/oauth/security/totp")
    csrf = CSRF.search(shown.text).group(1)
    wrong = await flow.client.post("/oauth/security/totp", data={"csrf": csrf, "code": "12345"})
    assert wrong.headers["location"] == "/oauth/security/totp?failed=1"
    again = await flow.client.get(wrong.headers["location"])
    assert SECRET.search(again.text).group(1) == SECRET.search(shown.text).group(1)  # the same app being set up
    assert "not the one your app shows now" in again.text
    assert await flow.count("authz_totp WHERE confirmed_at IS NOT NULL") == 0
    assert await flow.count("authz_recovery_codes") == 0
