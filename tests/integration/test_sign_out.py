"""Finding 16: there was no sign-out; a 12-hour session could not be ended by its
user. Now /oauth/logout (advertised as OpenID Connect RP-Initiated Logout's
`end_session_endpoint`) asks, then ends the session with a CSRF-protected POST, and
sends the browser back only to a URI registered for the client."""

from __future__ import annotations

import re

from courseschool.authz.metadata import authorization_server_metadata, openid_configuration

from .flow import BASE_URL, REDIRECT_URI, Flow, pkce_pair, query_of

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def _signed_in(flow: Flow) -> tuple[dict, dict]:
    reg = await flow.register()
    tokens = await flow.tokens(reg, await flow.user("owner"))
    return reg, tokens


async def _still_signed_in(flow: Flow, reg: dict) -> bool:
    _, challenge = pkce_pair()
    silent = await flow.start(flow.authorize_params(reg, challenge, prompt="none"))
    return query_of(silent.headers["location"])["error"] == "consent_required"  # not login_required


async def test_sign_out_asks_then_ends_the_session(flow: Flow) -> None:
    reg, _ = await _signed_in(flow)
    assert await _still_signed_in(flow, reg)
    page = await flow.client.get("/oauth/logout")
    assert page.status_code == 200 and "Sign out of Course School?" in page.text
    assert page.headers["x-frame-options"] == "DENY" and "no-store" in page.headers["cache-control"]
    assert await _still_signed_in(flow, reg)  # asking ends nothing
    assert '<a class="button" href="/oauth/apps">Stay signed in</a>' in page.text  # a way back (issue 24)

    done = await flow.client.post("/oauth/logout", data={"csrf": CSRF.search(page.text).group(1)})
    assert done.status_code == 200 and "You are signed out" in done.text
    # The next step (issue 24): sign in again, or the connected apps (which ask to sign in first).
    assert 'href="/oauth/signin">Sign in again</a>' in done.text
    assert 'href="/oauth/apps">Your connected apps</a>' in done.text
    assert 'cs_session=""' in done.headers["set-cookie"] or "Max-Age=0" in done.headers["set-cookie"]
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 0
    assert not await _still_signed_in(flow, reg)


async def test_a_forged_form_ends_nothing(flow: Flow) -> None:
    reg, _ = await _signed_in(flow)
    refused = await flow.client.post("/oauth/logout", data={"csrf": "0" * 64})
    assert refused.status_code == 403 and "text/html" in refused.headers["content-type"]
    assert await _still_signed_in(flow, reg)


async def test_rp_initiated_logout_returns_to_the_registered_uri(flow: Flow) -> None:
    reg, tokens = await _signed_in(flow)
    back = REDIRECT_URI.replace("53682", "61234")  # a loopback URI's port may differ (RFC 8252 §7.3)
    page = await flow.client.get(
        "/oauth/logout", params={"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": back, "state": "s-1"}
    )
    assert page.status_code == 200 and "Test CLI" in page.text
    assert "An app that calls itself <strong>«<bdi" in page.text and "not verified by your school" in page.text
    form = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    done = await flow.client.post("/oauth/logout", data=form)
    assert done.status_code == 303
    assert done.headers["location"] == f"{back}?state=s-1"
    assert not await _still_signed_in(flow, reg)


async def test_no_redirect_to_an_unregistered_uri(flow: Flow) -> None:
    reg, tokens = await _signed_in(flow)
    for params in (
        {"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": "https://evil.example/cb"},
        {"post_logout_redirect_uri": REDIRECT_URI},  # no client named
        {"client_id": reg["client_id"], "post_logout_redirect_uri": "http://127.0.0.1:5000/other"},
        {"id_token_hint": tokens["id_token"][:-4] + "AAAA", "post_logout_redirect_uri": REDIRECT_URI},
        {"id_token_hint": tokens["access_token"], "post_logout_redirect_uri": REDIRECT_URI},
    ):
        refused = await flow.client.get("/oauth/logout", params=params)
        assert refused.status_code == 400, params
        assert "location" not in refused.headers and "text/html" in refused.headers["content-type"]
    assert await _still_signed_in(flow, reg)


async def test_not_signed_in_is_offered_the_way_back(flow: Flow) -> None:
    """Nothing redirects without a session to end (test_logout_never_fetches has the rule)."""
    _, tokens = await _signed_in(flow)
    flow.client.cookies.clear()
    gone = await flow.client.get(
        "/oauth/logout",
        params={"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": REDIRECT_URI, "state": "x"},
    )
    assert gone.status_code == 200 and "location" not in gone.headers
    assert f'<a href="{REDIRECT_URI}?state=x">' in gone.text
    page = await flow.client.get("/oauth/logout")
    assert page.status_code == 200 and "You are signed out" in page.text


async def test_end_session_endpoint_is_advertised(flow: Flow) -> None:
    settings = flow.client.app.state.authz.settings
    assert openid_configuration(settings)["end_session_endpoint"] == f"{BASE_URL}/oauth/logout"
    assert authorization_server_metadata(settings)["end_session_endpoint"] == f"{BASE_URL}/oauth/logout"
