"""Issue 40: where the school requires two-step sign-in of a person who has no second
factor, the enrolment step right after the password offers a passkey as well as an
authenticator app (where passkeys work at this address). Set up there, the passkey
completes the sign-in as the app's first code does: the session, the sign-in event naming
the factor, ten recovery codes shown once, then the consent page. A refused or replayed
answer changes nothing and counts as a wrong code; CSRF."""

from __future__ import annotations

from courseschool.authz.endpoints.passkey_enrolment import PASSKEY_NOT_SAVED

from ..support.soft_authenticator import SoftAuthenticator
from .flow import Flow, csrf_of, pkce_pair
from .passkeys import (
    ORIGIN,
    browser,
    events,
    passkey_form,
    passkeys_of,
    sessions,
    sign_in_with_password,
    signed_in,
)
from .test_first_passkey_codes import codes_of
from .test_school_requires_two_step import require
from .test_two_step_sign_in import RECOVERY

SCHOOL_PAGE = "/oauth/school/security"


async def _required(flow: Flow, rule: str = "staff") -> str:
    school = await flow.school()
    owner = await flow.user("owner", school=school)
    async with browser(flow) as settings:
        await sign_in_with_password(settings, owner, SCHOOL_PAGE)
        await require(settings, rule)
    return school


async def _at_enrolment(flow: Flow) -> tuple[dict[str, str], str]:
    """An admin the school requires two steps of, past the password of an authorization request."""
    school = await _required(flow)
    admin = await flow.user("admin", school=school)
    reg = await flow.register()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = str(start.headers["location"])
    assert not signed_in(await flow.login(interaction, admin))
    return admin, interaction


async def test_a_passkey_meets_the_requirement_before_consent(here: Flow) -> None:
    admin, interaction = await _at_enrolment(here)
    page = (await here.client.get(interaction)).text
    assert "Set up two-step sign-in" in page and "a passkey or" in page and "/consent" not in page
    assert '<section aria-labelledby="with-passkey" data-passkey-only hidden>' in page  # shown by the script
    assert '<code class="secret"' in page  # the app stays offered
    action, csrf, options = passkey_form(page)
    assert action == f"{interaction}/passkey"
    assert options["rp"]["id"] == "localhost" and options["authenticatorSelection"]["userVerification"] == "required"
    assert '<script src="/oauth/assets/passkeys.js" defer></script>' in page
    key = SoftAuthenticator(ORIGIN)
    before = await sessions(here)
    done = await here.client.post(
        action, data={"csrf": csrf, "name": " Work  phone ", "credential": key.create(options)}
    )
    assert signed_in(done) and done.headers["location"] == interaction
    assert await sessions(here) == before + 1
    assert [k["name"] for k in await passkeys_of(here, admin)] == ["Work phone"]
    codes_page = (await here.client.get(interaction)).text
    assert "Your passkey was added" in codes_page and "/consent" not in codes_page
    assert len(RECOVERY.findall(codes_page)) == 10 and len(await codes_of(here, admin)) == 10
    consent = (await here.client.get(interaction)).text  # the codes once; then the consent page
    assert f'action="{interaction}/consent"' in consent and not RECOVERY.findall(consent)
    assert (await events(here, "login_succeeded"))[-1] == {"subject": admin["id"], "factor": "password+passkey"}
    assert [e["factor"] for e in await events(here, "second_factor_added")] == ["passkey"]
    async with browser(here) as later:  # from now on: the password, then the passkey
        await here_sign_in(later, admin)
        step = (await later.client.get("/oauth/signin/second-step?next=%2Foauth%2Fsecurity")).text
        action, csrf, options = passkey_form(step)
        again = await later.client.post(action, data={"csrf": csrf, "credential": key.get(options)})
        assert signed_in(again) and again.headers["location"] == "/oauth/security"


async def here_sign_in(flow: Flow, user: dict[str, str]) -> None:
    shown = await flow.client.get("/oauth/signin", params={"next": "/oauth/security"})
    sent = await flow.client.post(
        "/oauth/signin",
        data={
            "csrf": csrf_of(shown.text),
            "email": user["email"],
            "password": user["password"],
            "next": "/oauth/security",
        },
    )
    assert sent.headers["location"] == "/oauth/signin/second-step?next=%2Foauth%2Fsecurity"


async def test_a_refused_or_replayed_passkey_changes_nothing_and_counts(here: Flow) -> None:
    admin, interaction = await _at_enrolment(here)
    key = SoftAuthenticator(ORIGIN)
    action, csrf, options = passkey_form((await here.client.get(interaction)).text)
    forged = await here.client.post(action, data={"csrf": "0" * 43, "name": "x", "credential": key.create(options)})
    assert forged.status_code == 403
    good = key.create(options)
    wrong = await here.client.post(
        action, data={"csrf": csrf, "name": "x", "credential": key.create(options, origin="http://evil.localhost:8000")}
    )
    assert not signed_in(wrong)
    page = (await here.client.get(interaction)).text
    assert PASSKEY_NOT_SAVED.split(":")[0] in page and "Set up two-step sign-in" in page
    replayed = await here.client.post(action, data={"csrf": csrf, "name": "x", "credential": good})
    assert not signed_in(replayed)  # the wrong answer spent the page's challenge
    reasons = [str(e["reason"]) for e in await events(here, "passkey_refused")]
    assert "origin" in reasons[0] and "challenge" in reasons[1]
    assert await passkeys_of(here, admin) == [] and await codes_of(here, admin) == []
    assert not [e for e in await events(here, "login_succeeded") if e["subject"] == admin["id"]]
    for _ in range(3):  # five refusals in all, as five wrong codes: the password again
        _, csrf, options = passkey_form((await here.client.get(interaction)).text)
        bad = key.create(options, rp_id="evil.localhost")
        assert not signed_in(await here.client.post(action, data={"csrf": csrf, "name": "x", "credential": bad}))
    login = (await here.client.get(interaction)).text
    assert f'action="{interaction}/login"' in login and "Set up two-step sign-in" not in login
    assert await passkeys_of(here, admin) == []


async def test_the_standalone_sign_in_takes_a_passkey_too(here: Flow) -> None:
    school = await _required(here, "everyone")
    student = await here.user("student", school=school)
    shown = await here.client.get("/oauth/signin", params={"next": "/oauth/apps"})
    first = await here.client.post(
        "/oauth/signin",
        data={
            "csrf": csrf_of(shown.text),
            "email": student["email"],
            "password": student["password"],
            "next": "/oauth/apps",
        },
    )
    step_page = first.headers["location"]
    assert step_page == "/oauth/signin/second-step?next=%2Foauth%2Fapps"
    action, csrf, options = passkey_form((await here.client.get(step_page)).text)
    assert action == "/oauth/signin/second-step/passkey?next=%2Foauth%2Fapps"
    key = SoftAuthenticator(ORIGIN)
    forged = await here.client.post(action, data={"csrf": "0" * 43, "name": "x", "credential": key.create(options)})
    assert forged.status_code == 403
    wrong = await here.client.post(
        action, data={"csrf": csrf, "name": "x", "credential": key.create(options, origin="http://x.localhost:8000")}
    )
    assert wrong.headers["location"] == "/oauth/signin/second-step?next=%2Foauth%2Fapps&failed=passkey"
    again = (await here.client.get(wrong.headers["location"])).text
    assert PASSKEY_NOT_SAVED.split(":")[0] in again and await passkeys_of(here, student) == []
    action, csrf, options = passkey_form(again)
    done = await here.client.post(action, data={"csrf": csrf, "name": "Laptop", "credential": key.create(options)})
    assert signed_in(done)
    assert done.headers["location"] == "/oauth/security/codes?next=%2Foauth%2Fapps&new=passkey"
    codes = await here.client.get(done.headers["location"])
    assert len(RECOVERY.findall(codes.text)) == 10 and "Your passkey was added" in codes.text
    assert 'href="/oauth/apps"' in codes.text
    once = await here.client.get(done.headers["location"])
    assert once.status_code == 303 and once.headers["location"] == "/oauth/apps"
    assert (await events(here, "login_succeeded"))[-1] == {"subject": student["id"], "factor": "password+passkey"}


async def test_at_an_ip_address_the_app_alone_is_offered(flow: Flow) -> None:
    """make run's http://127.0.0.1: browsers keep no passkey for an IP address."""
    admin, interaction = await _at_enrolment(flow)
    page = (await flow.client.get(interaction)).text
    assert "Set up two-step sign-in" in page and '<code class="secret"' in page
    assert 'class="passkey-form"' not in page and "a passkey or" not in page and "passkeys.js" not in page
    refused = await flow.client.post(
        f"{interaction}/passkey", data={"csrf": csrf_of(page), "name": "x", "credential": "{}"}
    )
    assert not signed_in(refused)
    assert await passkeys_of(flow, admin) == []
    assert "not available" in str((await events(flow, "passkey_refused"))[-1]["reason"])


async def test_a_set_up_begun_elsewhere_adds_nothing_once_the_person_has_a_factor(here: Flow) -> None:
    """Someone with the password reaches the set-up step; meanwhile the person sets up a
    factor in their own browser (a passkey here, written as their security page would).
    The set-up begun elsewhere then adds nothing, opens no session and leaves the
    person's recovery codes alone (third review, 28 Nov 2026, low 2)."""
    admin, interaction = await _at_enrolment(here)
    action, csrf, options = passkey_form((await here.client.get(interaction)).text)
    stores = here.client.app.state.authz.account_pages  # type: ignore[attr-defined]
    await stores.passkeys.keys.add(
        admin["id"],
        credential_id=b"the person's own",
        public_key=b"-",
        sign_count=0,
        rp_id="localhost",
        name="Mine",
        backed_up=False,
        now=stores.clock.now(),
    )
    before = await sessions(here)
    done = await here.client.post(
        action, data={"csrf": csrf, "name": "Theirs", "credential": SoftAuthenticator(ORIGIN).create(options)}
    )
    assert not signed_in(done)
    assert await sessions(here) == before
    assert [k["name"] for k in await passkeys_of(here, admin)] == ["Mine"]
    assert await codes_of(here, admin) == []
