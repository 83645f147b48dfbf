"""Redirect URIs are compared as strings (RFC 9700 §4.1.3, RFC 8252 §7.3): the
registered string, or for a loopback URI the registered string with only its port
changed. Any other spelling of "the same" URI is refused at the authorization endpoint
with the error page, never a redirect, and at the token endpoint with invalid_grant.
A black-box check found `HTTP://127.0.0.1:<port>/cb` accepted: the comparison used to
parse both sides first, which lower-cases the scheme."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.authz.endpoints.admin import AdminService

from .flow import REDIRECT_URI, Flow, pkce_pair

# REDIRECT_URI is http://127.0.0.1:53682/callback
LOOPBACK_VARIANTS = [
    "HTTP://127.0.0.1:53682/callback",  # scheme case
    "Http://127.0.0.1:61000/callback",  # scheme case, with another port
    "http://127.0.0.1:53682/%63allback",  # a percent-encoded letter
    "http://127.0.0.1:53682/callback?",  # an empty query
    "http://127.0.0.1:/callback",  # an empty port
    "http://127.0.0.1:053682/callback",  # a port spelled with a leading zero
    "http://127.0.0.1.:53682/callback",  # a trailing dot on the host
    "http://127.0.0.1:53682/callback.",  # a trailing dot on the path
    "http://@127.0.0.1:53682/callback",  # empty user-info
    "http://127.0.0.1:53682//callback",  # a doubled slash
]
LOCALHOST_URI = "http://localhost:3000/callback"
LOCALHOST_VARIANTS = [
    "http://LOCALHOST:3000/callback",
    "http://LocalHost:4000/callback",
    "http://localhost.:3000/callback",
]
HTTPS_URI = "https://app.example.com/callback"
HTTPS_VARIANTS = [
    "HTTPS://app.example.com/callback",  # scheme case
    "https://APP.example.com/callback",  # host case
    "https://app.example.com:443/callback",  # the default port spelled out
    "https://app.example.com:/callback",  # an empty port
    "https://app.example.com./callback",  # a trailing dot
    "https://app.example.com/%63allback",  # a percent-encoded letter
    "https://user@app.example.com/callback",  # user-info
]


async def _refused_with_the_error_page(flow: Flow, reg: dict[str, Any], redirect_uri: str) -> None:
    _, challenge = pkce_pair()
    response = await flow.start(flow.authorize_params(reg, challenge, redirect_uri=redirect_uri))
    assert response.status_code == 400, response.text
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert "the redirect_uri is not registered for this client" in response.text
    assert await flow.count("authz_codes") == 0


@pytest.mark.parametrize("redirect_uri", LOOPBACK_VARIANTS)
async def test_a_loopback_uri_spelled_otherwise_gets_the_error_page(flow: Flow, redirect_uri: str) -> None:
    reg = await flow.register()
    assert reg["redirect_uris"] == [REDIRECT_URI]
    await _refused_with_the_error_page(flow, reg, redirect_uri)


@pytest.mark.parametrize("redirect_uri", LOCALHOST_VARIANTS)
async def test_a_localhost_uri_spelled_otherwise_gets_the_error_page(flow: Flow, redirect_uri: str) -> None:
    reg = await flow.register(redirect_uris=[LOCALHOST_URI])
    await _refused_with_the_error_page(flow, reg, redirect_uri)


@pytest.mark.parametrize("redirect_uri", HTTPS_VARIANTS)
async def test_an_integration_https_uri_spelled_otherwise_gets_the_error_page(flow: Flow, redirect_uri: str) -> None:
    admin = AdminService(flow.client.app.state.authz.administration)  # type: ignore[attr-defined]
    reg = await admin.create_integration(name="Fixed callback", redirect_uris=[HTTPS_URI])
    await _refused_with_the_error_page(flow, reg, redirect_uri)


async def test_the_registered_string_and_a_loopback_port_change_still_work(flow: Flow) -> None:
    reg = await flow.register(redirect_uris=[LOCALHOST_URI])
    user = await flow.user()
    for uri in (LOCALHOST_URI, "http://localhost:4000/callback"):
        callback, verifier, _ = await flow.authorize(reg, user, redirect_uri=uri)
        exchanged = await flow.exchange(reg, callback["code"], verifier, redirect_uri=uri)
        assert exchanged.status_code == 200, exchanged.text


@pytest.mark.parametrize(
    "redirect_uri", ["HTTP://127.0.0.1:61000/callback", "http://127.0.0.1:61001/callback", "http://127.0.0.1:/callback"]
)
async def test_the_token_request_must_repeat_the_authorization_requests_string(flow: Flow, redirect_uri: str) -> None:
    """RFC 6749 §4.1.3: "identical" to the one in the authorization request, even where
    the authorization endpoint would have accepted the other spelling (another port)."""
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, await flow.user(), redirect_uri="http://127.0.0.1:61000/callback")
    refused = await flow.exchange(reg, callback["code"], verifier, redirect_uri=redirect_uri)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert await flow.count("authz_refresh_tokens") == 0
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0
    accepted = await flow.exchange(reg, callback["code"], verifier, redirect_uri="http://127.0.0.1:61000/callback")
    assert accepted.status_code == 200, accepted.text


async def test_sign_out_does_not_send_the_browser_to_another_spelling(flow: Flow) -> None:
    reg = await flow.register()
    for uri in ("HTTP://127.0.0.1:53682/callback", "http://127.0.0.1:53682/%63allback"):
        refused = await flow.client.get(
            "/oauth/logout", params={"client_id": reg["client_id"], "post_logout_redirect_uri": uri}
        )
        assert refused.status_code == 400, uri
        assert "location" not in refused.headers and "text/html" in refused.headers["content-type"]
