"""An interaction is bound to the login session that signed it in (at /authorize, the
browser's; at the sign-in form, the new one): its consent page, its decision and its
request to the school need that session still live and of the interaction's person.
Ended (a password reset, a sign-out...), the interaction is back at its sign-in form
and grants nothing. An interaction has a fixed lifetime: loading its pages does not
extend it."""

from __future__ import annotations

from typing import NamedTuple, cast

import pytest

from courseschool.authz.endpoints.access_requests import ask
from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.endpoints.interaction import consent_view, decide
from courseschool.common.clock import FrozenClock
from courseschool.common.errors import InvalidRequestError

from .flow import Flow, csrf_of, pkce_pair, query_of
from .mailbox import components
from .test_two_step_sign_in import standalone_sign_in

SIGN_IN_FORM = 'name="password"'


async def _signed_in_interaction(flow: Flow, user: dict[str, str]) -> tuple[dict[str, str], str, str]:
    reg = await flow.register()
    verifier, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    assert (await flow.login(interaction, user)).status_code == 303
    return reg, interaction, verifier


async def test_an_interaction_signed_in_before_a_password_reset_grants_nothing_after_it(
    flow: Flow, clock: FrozenClock
) -> None:
    """Whoever signed in with the old password and kept the consent page open: after the
    reset the page asks to sign in again, and an approval posted anyway makes no code."""
    victim = await flow.user("student")
    reg, interaction, verifier = await _signed_in_interaction(flow, victim)
    page, csrf = await flow.page(interaction)
    assert f'action="{interaction}/consent"' in page.text
    admin = AdminService(components(flow).administration, actor="admin-cli", source="tester@host")
    await admin.reset_password(victim["id"])  # the account is recovered: its sessions end
    clock.advance(14 * 60)
    again, _ = await flow.page(interaction)
    assert again.status_code == 200 and SIGN_IN_FORM in again.text and "/consent" not in again.text
    posted = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 400
    assert "code=" not in posted.headers.get("location", "")
    assert await flow.count("authz_codes") == 0 and await flow.count("authz_grants") == 0
    # The interaction itself is kept: the person may sign in again and decide.
    relogin = await flow.client.post(
        f"{interaction}/login", data={"csrf": csrf, "email": victim["email"], "password": "not the old one"}
    )
    assert relogin.status_code == 303 and "cs_session=" not in relogin.headers.get("set-cookie", "")
    assert "not right" in (await flow.page(interaction))[0].text  # still this browser's sign-in form
    del reg, verifier


async def test_an_interaction_opened_signed_in_ends_with_that_sign_in(flow: Flow) -> None:
    """Bound at /authorize to the browser's session: signing out there ends its say."""
    user = await flow.user("student")
    assert (await standalone_sign_in(flow, user, "/oauth/apps")).status_code == 303
    reg = await flow.register()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    page, csrf = await flow.page(interaction)
    assert f'action="{interaction}/consent"' in page.text  # signed in already: straight to consent
    shown = await flow.client.get("/oauth/logout")
    assert (await flow.client.post("/oauth/logout", data={"csrf": csrf_of(shown.text)})).status_code in (200, 303)
    after, _ = await flow.page(interaction)
    assert SIGN_IN_FORM in after.text and "/consent" not in after.text
    posted = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 400 and await flow.count("authz_codes") == 0


async def test_a_sign_in_of_this_browser_does_not_revive_an_ended_one(flow: Flow) -> None:
    """The interaction's own session ended; another live session of the same person in
    the browser's cookie does not stand in for it."""
    user = await flow.user("student")
    reg, interaction, _ = await _signed_in_interaction(flow, user)
    assert await flow.pool.execute("UPDATE authz_login_sessions SET ended_at = now()") == "UPDATE 1"
    assert (await standalone_sign_in(flow, user, "/oauth/apps")).status_code == 303  # a new session, same person
    page, csrf = await flow.page(interaction)
    assert SIGN_IN_FORM in page.text and "/consent" not in page.text
    del reg, csrf


async def test_the_interactions_lifetime_is_not_extended_by_its_pages(flow: Flow) -> None:
    user = await flow.user("student")
    _, interaction, _ = await _signed_in_interaction(flow, user)
    key = "authz:interaction:" + interaction.rsplit("/", 1)[-1]
    await flow.redis.expire(key, 100)
    page, _ = await flow.page(interaction)
    assert f'action="{interaction}/consent"' in page.text  # the consent page, which saves the interaction
    left = cast(int, await flow.redis.ttl(key))
    assert 0 < left <= 100, left


async def test_an_approval_in_the_live_sign_in_still_makes_a_code(flow: Flow) -> None:
    user = await flow.user("student")
    reg, interaction, verifier = await _signed_in_interaction(flow, user)
    done = await flow.consent(interaction)
    callback = query_of(done.headers["location"])
    assert (await flow.exchange(reg, callback["code"], verifier)).status_code == 200


async def test_the_use_cases_themselves_refuse_an_ended_sign_in(flow: Flow) -> None:
    """Whoever calls them (not only the pages, which send the interaction back first):
    the consent view, the decision and the request to the school need the live sign-in."""
    user = await flow.user("student")
    _, interaction, _ = await _signed_in_interaction(flow, user)
    await flow.page(interaction)  # the consent page shown: a decision may approve
    assert await flow.pool.execute("UPDATE authz_login_sessions SET ended_at = now()") == "UPDATE 1"
    pages = components(flow).sign_in_pages
    uid = interaction.rsplit("/", 1)[-1]
    pending = await pages.interactions.get(uid)
    assert pending is not None and pending.user_id == user["id"]
    with pytest.raises(InvalidRequestError):
        await consent_view(pages, pending, None)
    with pytest.raises(InvalidRequestError, match="sign-in is no longer valid"):
        await ask(pages, pending, "for my essay", ip="127.0.0.1")
    with pytest.raises(InvalidRequestError, match="sign-in is no longer valid"):
        await decide(pages, uid, approve=True, ip="127.0.0.1")
    assert await flow.count("authz_codes") == 0 and await flow.count("authz_app_access_requests") == 0


class TwoSignIns(NamedTuple):
    first: dict[str, str]  # signed in on the first form, its consent page shown
    reg: dict[str, str]
    verifier: str
    one: str  # the first interaction
    consent: str  # its consent page, as shown before the other sign-in
    csrf: str


async def _two_sign_ins_in_one_browser(flow: Flow) -> TwoSignIns:
    """Two sign-in forms open in one browser: one person signs in on the first and is
    shown its consent page, another then signs in on the second (the browser's session
    cookie now theirs, the first person's session still live)."""
    first, other = await flow.user("student"), await flow.user("student")
    reg = await flow.register()
    verifier, challenge = pkce_pair()
    one = (await flow.start(flow.authorize_params(reg, challenge))).headers["location"]
    two = (await flow.start(flow.authorize_params(reg, challenge))).headers["location"]
    assert (await flow.login(one, first)).status_code == 303
    page, csrf = await flow.page(one)
    assert f'action="{one}/consent"' in page.text
    assert (await flow.login(two, other)).status_code == 303  # the cookie is now the other person's
    return TwoSignIns(first, reg, verifier, one, page.text, csrf)


async def test_a_decision_after_someone_else_signed_in_on_the_browser_grants_nothing(flow: Flow) -> None:
    """An approval posted on the first page would be recorded as made in the other
    person's sign-in: nothing is granted."""
    signed = await _two_sign_ins_in_one_browser(flow)
    one, csrf = signed.one, signed.csrf
    posted = await flow.client.post(f"{one}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 400 and "code=" not in posted.headers.get("location", "")
    assert await flow.count("authz_codes") == 0 and await flow.count("authz_grants") == 0


async def test_the_page_after_someone_else_signed_in_on_the_browser_asks_to_sign_in_again(flow: Flow) -> None:
    """The same two sign-ins: the first page, loaded again, shows neither the consent nor
    the first person (not even the address typed there): it asks to sign in, saying why.
    Signed in there again, the first person's approval is granted."""
    signed = await _two_sign_ins_in_one_browser(flow)
    first, reg, verifier, one = signed.first, signed.reg, signed.verifier, signed.one
    assert first["email"] in signed.consent
    again, csrf = await flow.page(one)
    assert SIGN_IN_FORM in again.text and f'action="{one}/consent"' not in again.text
    assert "signed in again since this page opened" in again.text
    assert first["email"] not in again.text and first["email"].split("@")[0] not in again.text
    posted = await flow.client.post(f"{one}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 400 and await flow.count("authz_codes") == 0
    assert (await flow.login(one, first)).status_code == 303
    consent, csrf = await flow.page(one)
    assert f'action="{one}/consent"' in consent.text
    posted = await flow.client.post(f"{one}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 303 and "code=" in posted.headers["location"]
    code = query_of(posted.headers["location"])["code"]
    tokens = await flow.exchange(reg, code, verifier)
    assert tokens.status_code == 200, tokens.text


async def test_a_decision_in_the_sign_in_that_opened_the_page_is_granted(flow: Flow) -> None:
    """The same page and browser, nobody else signed in: the approval makes its code."""
    user = await flow.user("student")
    _, interaction, _ = await _signed_in_interaction(flow, user)
    _, csrf = await flow.page(interaction)
    posted = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert posted.status_code == 303 and "code=" in posted.headers["location"]
    assert await flow.count("authz_grants") == 1
