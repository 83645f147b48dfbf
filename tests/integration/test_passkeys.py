"""Issue 40, passkeys (WebAuthn, verified by the `webauthn` library against answers of a
software authenticator): added, named, listed and removed on the security page (each an
event); a passkey signs in alone, on the standalone sign-in page and an authorization
request's; after the password it is the second step; the sign-in events say which factor.
At an IP address (make run's 127.0.0.1) the pages offer none and say why."""

from __future__ import annotations

from ..support.soft_authenticator import SoftAuthenticator
from .flow import Flow, csrf_of
from .passkeys import (
    FIRST_ADDED,
    ORIGIN,
    add_passkey,
    events,
    open_interaction,
    passkey_form,
    passkeys_of,
    person_with_passkey,
    sessions,
    sign_in_with_password,
    signed_in,
)


async def test_a_passkey_is_added_under_its_name_and_listed(here: Flow) -> None:
    user = await here.user()
    await sign_in_with_password(here, user)
    page = await here.client.get("/oauth/security/passkeys/new")
    _, _, options = passkey_form(page.text)
    assert options["rp"]["id"] == "localhost"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    added = await add_passkey(here, SoftAuthenticator(ORIGIN), name="  Work   laptop ")
    assert added.headers["location"] == FIRST_ADDED  # its recovery codes, once (test_first_passkey_codes.py)
    assert [k["name"] for k in await passkeys_of(here, user)] == ["Work laptop"]
    security = await here.client.get("/oauth/security?done=passkey-added")
    assert "Your passkey was added" in security.text and "<bdi>Work laptop</bdi>" in security.text
    assert "script-src 'self'" in security.headers["content-security-policy"]
    added_events = await events(here, "second_factor_added")
    assert [(e["subject"], e["factor"]) for e in added_events] == [(user["id"], "passkey")]
    again = await here.client.get("/oauth/security/passkeys/new")  # the passkey made is excluded
    assert passkey_form(again.text)[2]["excludeCredentials"][0]["type"] == "public-key"


async def test_a_passkey_signs_in_alone_on_the_sign_in_page(here: Flow) -> None:
    user, authenticator = await person_with_passkey(here)
    page = await here.client.get("/oauth/signin", params={"next": "/oauth/apps"})
    action, csrf, options = passkey_form(page.text)
    assert action == "/oauth/signin/passkey" and options["userVerification"] == "required"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert '<script src="/oauth/assets/passkeys.js" defer></script>' in page.text
    script = await here.client.get("/oauth/assets/passkeys.js")
    assert script.headers["content-type"].startswith("text/javascript") and b"navigator.credentials" in script.content
    assert options.get("allowCredentials") in (None, [])  # discoverable: the passkey says whose it is
    done = await here.client.post(
        action, data={"csrf": csrf, "next": "/oauth/apps", "credential": authenticator.get(options)}
    )
    assert signed_in(done) and done.headers["location"] == "/oauth/apps"
    assert (await events(here, "login_succeeded"))[-1] == {"subject": user["id"], "factor": "passkey"}
    assert (await passkeys_of(here, user))[0]["sign_count"] == 1


async def test_a_passkey_signs_in_alone_to_an_app_then_consent(here: Flow) -> None:
    user, authenticator = await person_with_passkey(here)
    reg = await here.register()
    interaction = await open_interaction(here, reg)
    page, _ = await here.page(interaction)
    action, csrf, options = passkey_form(page.text)
    assert action == f"{interaction}/passkey"
    done = await here.client.post(action, data={"csrf": csrf, "credential": authenticator.get(options)})
    assert signed_in(done)
    consent, _ = await here.page(interaction)
    assert f'action="{interaction}/consent"' in consent.text
    succeeded = (await events(here, "login_succeeded"))[-1]
    assert succeeded["factor"] == "passkey" and succeeded["subject"] == user["id"]


async def test_after_the_password_a_passkey_is_the_second_step(here: Flow) -> None:
    user, authenticator = await person_with_passkey(here)
    reg = await here.register()
    interaction = await open_interaction(here, reg)
    before = await sessions(here)
    assert (await here.login(interaction, user)).status_code == 303
    assert await sessions(here) == before  # the password alone opened none
    page, _ = await here.page(interaction)
    assert "Two-step sign-in" in page.text
    action, csrf, options = passkey_form(page.text)
    assert [c["id"] for c in options["allowCredentials"]]  # the person's own passkeys
    done = await here.client.post(action, data={"csrf": csrf, "credential": authenticator.get(options)})
    assert signed_in(done)
    assert (await events(here, "login_succeeded"))[-1]["factor"] == "password+passkey"


async def test_the_standalone_second_step_takes_a_passkey(here: Flow) -> None:
    user, authenticator = await person_with_passkey(here)
    shown = await here.client.get("/oauth/signin", params={"next": "/oauth/apps"})
    first = await here.client.post(
        "/oauth/signin",
        data={"csrf": csrf_of(shown.text), "email": user["email"], "password": user["password"], "next": "/oauth/apps"},
    )
    assert first.headers["location"].startswith("/oauth/signin/second-step")
    step = await here.client.get(first.headers["location"])
    action, csrf, options = passkey_form(step.text)
    assert action == "/oauth/signin/second-step/passkey?next=%2Foauth%2Fapps"
    done = await here.client.post(action, data={"csrf": csrf, "credential": authenticator.get(options)})
    assert signed_in(done) and done.headers["location"] == "/oauth/apps"
    assert (await events(here, "login_succeeded"))[-1]["factor"] == "password+passkey"


async def test_a_passkey_is_renamed_and_removed_each_confirmed(here: Flow) -> None:
    user = await here.user()
    await sign_in_with_password(here, user)
    await add_passkey(here, SoftAuthenticator(ORIGIN))
    [key] = await passkeys_of(here, user)
    rename = await here.client.get(f"/oauth/security/passkeys/{key['id']}/rename")
    renamed = await here.client.post(
        f"/oauth/security/passkeys/{key['id']}/rename", data={"csrf": csrf_of(rename.text), "name": "Phone"}
    )
    assert renamed.headers["location"] == "/oauth/security?done=passkey-renamed"
    assert (await passkeys_of(here, user))[0]["name"] == "Phone"
    confirm = await here.client.get(f"/oauth/security/passkeys/{key['id']}/remove")
    assert "Remove the passkey <bdi>«Phone»</bdi>?" in confirm.text
    assert await passkeys_of(here, user)  # the confirmation page removes nothing
    removed = await here.client.post(
        f"/oauth/security/passkeys/{key['id']}/remove", data={"csrf": csrf_of(confirm.text)}
    )
    assert removed.headers["location"] == "/oauth/security?done=passkey-removed"
    assert await passkeys_of(here, user) == []
    assert [e["action"] for e in await _passkey_events(here)] == ["added", "renamed", "removed"]
    again = await here.client.post(f"/oauth/security/passkeys/{key['id']}/remove", data={"csrf": csrf_of(confirm.text)})
    assert again.status_code == 404


async def _passkey_events(flow: Flow) -> list[dict[str, str]]:
    added = [{"action": "added", **e} for e in await events(flow, "second_factor_added") if e["factor"] == "passkey"]
    renamed = [{"action": "renamed", **e} for e in await events(flow, "passkey_renamed")]
    removed = [{"action": "removed", **e} for e in await events(flow, "second_factor_removed")]
    return added + renamed + removed


async def test_another_persons_passkey_cannot_be_renamed_or_removed(here: Flow) -> None:
    owner, _ = await person_with_passkey(here)
    [key] = await passkeys_of(here, owner)
    other = await here.user()
    await sign_in_with_password(here, other)
    assert (await here.client.get(f"/oauth/security/passkeys/{key['id']}/remove")).status_code == 404
    assert (await here.client.get("/oauth/security/passkeys/not-an-id/rename")).status_code == 404
    assert await passkeys_of(here, owner) == [key]


async def test_an_administrators_reset_removes_the_passkeys_too(here: Flow) -> None:
    from courseschool.authz.endpoints.admin import AdminService

    user, _ = await person_with_passkey(here)
    admin = AdminService(here.client.app.state.authz.administration)  # type: ignore[attr-defined]
    reset = await admin.reset_second_factors(user["email"])
    assert reset["removed"]["passkeys"] == 1 and await passkeys_of(here, user) == []


async def test_at_an_ip_address_passkeys_are_not_offered_and_the_page_says_why(flow: Flow) -> None:
    """make run's BASE_URL is http://127.0.0.1:PORT: no relying-party id is possible."""
    user = await flow.user()
    signin = await flow.client.get("/oauth/signin")
    assert "passkey-form" not in signin.text and "script-src" not in signin.headers["content-security-policy"]
    shown = await flow.client.post(
        "/oauth/signin",
        data={
            "csrf": csrf_of(signin.text),
            "email": user["email"],
            "password": user["password"],
            "next": "/oauth/security",
        },
    )
    assert shown.status_code == 303
    security = await flow.client.get("/oauth/security")
    assert "Passkeys are not available on this server" in security.text
    assert "127.0.0.1:8000</strong>," in security.text and "a numeric IP address" in security.text
    assert "/oauth/security/passkeys/new" not in security.text
    refused = await flow.client.get("/oauth/security/passkeys/new")
    assert refused.status_code == 400 and "Passkeys are not available on this server" in refused.text
    assert await flow.redis.keys("authz:passkey-challenge:*") == []
