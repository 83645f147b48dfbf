"""Issue 40, passkeys refused (the `webauthn` library's real verification, answers of a
software authenticator): an assertion for another person, for another origin or
relying-party id, a challenge answered twice or answered from another browser, no user
verification where a passkey stands alone, a counter gone backwards; CSRF on every form,
a removal never without its confirmation; wrong passkeys count in the lockout as wrong
codes do. Each refusal opens no session and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from courseschool.authz.app import create_app

from ..support.soft_authenticator import SoftAuthenticator
from .flow import Flow, csrf_of
from .passkeys import (
    ORIGIN,
    add_passkey,
    browser,
    events,
    open_interaction,
    passkey_form,
    passkeys_of,
    person_with_passkey,
    serve_at_localhost,
    sessions,
    sign_in_with_password,
    signed_in,
)
from .sign_in import with_settings


@pytest.fixture
async def three_strikes(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:  # type: ignore[no-untyped-def]
    settings = with_settings(authz_settings, base_url=ORIGIN, login_lockout_threshold=3)
    async with serve_at_localhost(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def passwordless(flow: Flow, answer: object, **changes: object) -> tuple[bool, list[dict[str, object]]]:
    """A sign-in without a password on the sign-in page of a new browser: whether it signed
    in, and the refusals' events."""
    async with browser(flow) as new:
        page = await new.client.get("/oauth/signin")
        action, csrf, options = passkey_form(page.text)
        credential = answer(options, **changes)  # type: ignore[operator]
        done = await new.client.post(action, data={"csrf": csrf, "credential": credential})
    assert done.status_code == 303
    return signed_in(done), [e for e in await events(flow, "login_failed") if e.get("factor") == "passkey"]


async def test_an_assertion_for_another_person_is_refused(here: Flow) -> None:
    owner, owners_key = await person_with_passkey(here)
    other, _ = await person_with_passkey(here)
    reg = await here.register()
    interaction = await open_interaction(here, reg)  # the other person's password, then the owner's passkey
    await here.login(interaction, other)
    page, _ = await here.page(interaction)
    action, csrf, options = passkey_form(page.text)
    options["allowCredentials"] = []  # as an attacker's browser would ignore them
    forged = owners_key.get(options, credential=owners_key.credentials[0])
    refused = await here.client.post(action, data={"csrf": csrf, "credential": forged})
    assert not signed_in(refused)
    failed = await events(here, "second_factor_failed")
    assert failed[-1]["subject"] == other["id"] and failed[-1]["reason"] == "the passkey is another person's"
    assert "That passkey was not accepted" in (await here.page(interaction))[0].text
    # Without a password: the other person's user handle on the owner's passkey.
    from courseschool.authz.protocol.passkeys import user_handle

    ok, failures = await passwordless(here, owners_key.get, user_handle=user_handle(other["id"]))
    assert not ok and failures[-1]["reason"] == "the user handle is another person's"
    assert (await passkeys_of(here, owner))[0]["sign_count"] == 0


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"origin": "http://evil.localhost:8000"}, "origin"),
        ({"origin": "http://127.0.0.1:8000"}, "origin"),
        ({"rp_id": "evil.example"}, "RP ID"),
    ],
)
async def test_an_assertion_for_another_origin_or_relying_party_is_refused(
    here: Flow, changes: dict[str, str], reason: str
) -> None:
    _, key = await person_with_passkey(here)
    before = await sessions(here)
    ok, failures = await passwordless(here, key.get, **changes)
    assert not ok and reason in str(failures[-1]["reason"])
    assert await sessions(here) == before


async def test_a_registration_for_another_origin_is_refused(here: Flow) -> None:
    user = await here.user()
    await sign_in_with_password(here, user)
    refused = await add_passkey(here, SoftAuthenticator(ORIGIN), origin="http://evil.localhost:8000")
    assert refused.headers["location"] == "/oauth/security/passkeys/new?failed=1"
    assert await passkeys_of(here, user) == []
    assert "origin" in (await events(here, "passkey_refused"))[-1]["reason"]
    page = await here.client.get(refused.headers["location"])
    assert "The passkey was not saved" in page.text


async def test_a_challenge_is_answered_once_and_only_by_its_browser(here: Flow) -> None:
    _, key = await person_with_passkey(here)
    page = await here.client.get("/oauth/signin")
    action, csrf, options = passkey_form(page.text)
    challenges = await here.redis.keys("authz:passkey-challenge:*")
    assert challenges and all([0 < await here.redis.ttl(k) <= 300 for k in challenges])  # short-lived
    answer = key.get(options)
    async with browser(here) as elsewhere:  # another browser posts this page's answer with its own form
        theirs = await elsewhere.client.get("/oauth/signin")
        _, their_csrf, _ = passkey_form(theirs.text)
        stolen = await elsewhere.client.post(action, data={"csrf": their_csrf, "credential": answer})
        assert not signed_in(stolen)
    wrong = await here.client.post(action, data={"csrf": csrf, "credential": key.get(options, origin="http://x")})
    assert not signed_in(wrong)  # this answer spent the page's challenge
    replayed = await here.client.post(action, data={"csrf": csrf, "credential": answer})
    assert not signed_in(replayed)
    reasons = [str(e["reason"]) for e in await events(here, "login_failed")]
    assert "challenge was not expected challenge" in reasons[0]  # the other browser's challenge is not this one
    assert "origin" in reasons[1]
    assert reasons[2] == "no challenge: used already, expired, or of another browser"
    fresh = await here.client.get("/oauth/signin")  # a new page: its own challenge, the old answer is not for it
    _, fresh_csrf, fresh_options = passkey_form(fresh.text)
    assert fresh_options["challenge"] != options["challenge"]
    assert not signed_in(await here.client.post(action, data={"csrf": fresh_csrf, "credential": answer}))
    last = await here.client.get("/oauth/signin")  # every answer spends the challenge: the next page's is new
    _, last_csrf, last_options = passkey_form(last.text)
    assert signed_in(await here.client.post(action, data={"csrf": last_csrf, "credential": key.get(last_options)}))
    assert await sessions(here) == 2  # the set-up's, and this last one


async def test_without_a_password_user_verification_is_required(here: Flow) -> None:
    _, key = await person_with_passkey(here)
    ok, failures = await passwordless(here, key.get, user_verified=False)
    assert not ok and "verification" in str(failures[-1]["reason"])


async def test_as_the_second_step_user_presence_is_enough(here: Flow) -> None:
    user, key = await person_with_passkey(here)
    interaction = await open_interaction(here, await here.register())
    await here.login(interaction, user)
    page, _ = await here.page(interaction)
    action, csrf, options = passkey_form(page.text)
    done = await here.client.post(action, data={"csrf": csrf, "credential": key.get(options, user_verified=False)})
    assert signed_in(done)


async def test_a_counter_that_went_backwards_is_refused(here: Flow) -> None:
    """WebAuthn §6.1.1: the authenticator may have been cloned."""
    user, key = await person_with_passkey(here)
    ok, _ = await passwordless(here, key.get, sign_count=5)
    assert ok
    ok, failures = await passwordless(here, key.get, sign_count=3)
    assert not ok and "sign count" in str(failures[-1]["reason"])
    assert (await passkeys_of(here, user))[0]["sign_count"] == 5


async def test_every_passkey_form_refuses_a_token_not_of_its_page(here: Flow) -> None:
    user, key = await person_with_passkey(here)
    [passkey] = await passkeys_of(here, user)
    async with browser(here) as own:
        ok_page = await own.client.get("/oauth/signin")
        action, csrf, options = passkey_form(ok_page.text)
        assert signed_in(await own.client.post(action, data={"csrf": csrf, "credential": key.get(options)}))
        new = await own.client.get("/oauth/security/passkeys/new")
        _, add_csrf, add_options = passkey_form(new.text)
        rename_csrf = csrf_of((await own.client.get(f"/oauth/security/passkeys/{passkey['id']}/rename")).text)
        forms = {
            "/oauth/security/passkeys": {"name": "X", "credential": SoftAuthenticator(ORIGIN).create(add_options)},
            f"/oauth/security/passkeys/{passkey['id']}/rename": {"name": "X"},
            f"/oauth/security/passkeys/{passkey['id']}/remove": {},
        }
        for path, fields in forms.items():
            for token in ("", "forged", csrf):
                refused = await own.client.post(path, data={"csrf": token, **fields})
                assert refused.status_code == 403, (path, token, refused.text)
        # A removal never without its confirmation: the tokens of the other pages do not remove.
        for token in (add_csrf, rename_csrf):
            refused = await own.client.post(f"/oauth/security/passkeys/{passkey['id']}/remove", data={"csrf": token})
            assert refused.status_code == 403
    assert [k["id"] for k in await passkeys_of(here, user)] == [passkey["id"]]
    sign_in_page = await here.client.get("/oauth/signin")
    _, _, options = passkey_form(sign_in_page.text)
    for token in ("", "forged"):
        refused = await here.client.post("/oauth/signin/passkey", data={"csrf": token, "credential": key.get(options)})
        assert refused.status_code == 403
    shown = await here.client.get("/oauth/signin")
    await here.client.post(
        "/oauth/signin", data={"csrf": csrf_of(shown.text), "email": user["email"], "password": user["password"]}
    )
    step = await here.client.get("/oauth/signin/second-step")
    _, _, step_options = passkey_form(step.text)
    refused = await here.client.post(
        "/oauth/signin/second-step/passkey",
        data={"csrf": csrf_of(sign_in_page.text), "credential": key.get(step_options)},
    )
    assert refused.status_code == 403  # the first step's token is not the second's
    interaction = await open_interaction(here, await here.register())
    page, _ = await here.page(interaction)
    _, _, options = passkey_form(page.text)
    refused = await here.client.post(f"{interaction}/passkey", data={"csrf": "forged", "credential": key.get(options)})
    assert refused.status_code == 403
    assert await sessions(here) == 2  # the person's own two sign-ins, nothing more


async def test_wrong_passkeys_count_in_the_lockout_as_wrong_codes_do(three_strikes: Flow) -> None:
    flow = three_strikes
    user, key = await person_with_passkey(flow)
    interaction = await open_interaction(flow, await flow.register())
    await flow.login(interaction, user)
    for _ in range(3):
        page, _ = await flow.page(interaction)
        action, csrf, options = passkey_form(page.text)
        wrong = await flow.client.post(action, data={"csrf": csrf, "credential": key.get(options, origin="http://x")})
        assert wrong.status_code == 303 and not signed_in(wrong)
    page, _ = await flow.page(interaction)
    action, csrf, options = passkey_form(page.text)
    locked = await flow.client.post(action, data={"csrf": csrf, "credential": key.get(options)})
    assert locked.status_code == 429 and "Too many attempts" in locked.text
    assert len(await events(flow, "second_factor_failed")) == 3
    assert any(e["rule"] == "address_at_account" for e in await events(flow, "account_locked"))
    sign_in_page = await flow.client.get("/oauth/signin")
    action, csrf, options = passkey_form(sign_in_page.text)
    alone = await flow.client.post(action, data={"csrf": csrf, "credential": key.get(options)})
    assert alone.status_code == 429  # the passkey alone is locked out at this account too
    assert await sessions(flow) == 1  # only the set-up's own sign-in


async def test_five_wrong_passkeys_at_the_second_step_ask_for_the_password_again(here: Flow) -> None:
    user, key = await person_with_passkey(here)
    shown = await here.client.get("/oauth/signin")
    await here.client.post(
        "/oauth/signin", data={"csrf": csrf_of(shown.text), "email": user["email"], "password": user["password"]}
    )
    location = "/oauth/signin/second-step"
    for attempt in range(5):
        step = await here.client.get(location)
        assert ("That passkey was not accepted. Try it again, or type a code." in step.text) == (attempt > 0)
        action, csrf, options = passkey_form(step.text)
        wrong = await here.client.post(action, data={"csrf": csrf, "credential": key.get(options, rp_id="x.test")})
        assert not signed_in(wrong)
        location = wrong.headers["location"]
    assert location == "/oauth/signin?next=%2Foauth%2Fapps&failed=codes"
    again = await here.client.get("/oauth/signin/second-step")
    assert again.headers["location"] == "/oauth/signin?next=%2Foauth%2Fapps"  # the password first
    assert len(await events(here, "second_factor_failed")) == 5
