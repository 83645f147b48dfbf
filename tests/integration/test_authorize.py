"""The authorization endpoint and the login and consent pages."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from .flow import BASE_URL, REDIRECT_URI, Flow, pkce_pair, query_of


async def _interaction(flow: Flow, reg: dict, **extra: str) -> str:
    _, challenge = pkce_pair()
    response = await flow.start(flow.authorize_params(reg, challenge, **extra))
    assert response.status_code == 303, response.text
    return response.headers["location"]


async def test_unknown_client_gets_an_error_page_not_a_redirect(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge, client_id="no-such-client")
    response = await flow.start(params)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert "can&#39;t continue" in response.text or "can't continue" in response.text
    # In plain words, with what to do next (#14: the app must register again), and the reason in small print.
    assert "not registered with Course School" in response.text and "registers again" in response.text
    assert "developer: the client is unknown or disabled" in response.text


@pytest.mark.parametrize(
    "redirect_uri",
    ["http://127.0.0.1:53682/other", "https://evil.example/callback", "http://localhost:53682/callback", ""],
)
async def test_unregistered_redirect_uri_gets_an_error_page(flow: Flow, redirect_uri: str) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    response = await flow.start(flow.authorize_params(reg, challenge, redirect_uri=redirect_uri))
    assert response.status_code == 400
    assert "location" not in response.headers


async def test_loopback_redirect_uri_may_use_another_port(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    callback, verifier, _params = await flow.authorize(reg, user, redirect_uri="http://127.0.0.1:61000/callback")
    assert "code" in callback
    response = await flow.token(
        grant_type="authorization_code",
        code=callback["code"],
        redirect_uri="http://127.0.0.1:61000/callback",
        client_id=reg["client_id"],
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"code_challenge": ""}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": ""}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "openid teleport:write"}, "invalid_scope"),
        ({"resource": "https://other.example/api"}, "invalid_target"),
        ({"resource": "not a uri"}, "invalid_target"),
        ({"prompt": "none login"}, "invalid_request"),
        ({"request": "eyJ.e30."}, "request_not_supported"),
    ],
)
async def test_errors_after_redirect_validation_go_back_with_state_and_iss(flow: Flow, extra: dict, error: str) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge, **extra)
    response = await flow.start(params)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith(REDIRECT_URI + "?")
    query = query_of(location)
    assert query["error"] == error
    assert query["state"] == params["state"]
    assert query["iss"] == BASE_URL
    assert await flow.redis_keys() == 0


async def test_repeated_parameter_is_refused(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge)
    url = "/oauth/authorize?" + "&".join(f"{k}={v}" for k, v in params.items() if k != "state")
    response = await flow.client.get(url + "&scope=openid&state=abc")
    assert response.status_code == 303
    assert query_of(response.headers["location"])["error"] == "invalid_request"


async def test_a_repeated_parameter_of_any_name_is_refused_fit_for_a_description(flow: Flow) -> None:
    """The refusal names the repeated parameter, whose name the caller wrote: control and
    non-ASCII characters in it are shown as "?" (RFC 6749 §5.2), never a 500."""
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = {**flow.authorize_params(reg, challenge), "state": "abc"}
    body = urlencode([*params.items(), ("X\u008c\u00f3", "1"), ("X\u008c\u00f3", "2")])
    response = await flow.client.post(
        "/oauth/authorize", content=body, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 303, response.text
    answer = query_of(response.headers["location"])
    assert answer["error"] == "invalid_request" and answer["error_description"] == "the X?? parameter is repeated"


async def test_pages_carry_the_protective_headers(flow: Flow) -> None:
    reg = await flow.register()
    page, _ = await flow.page(await _interaction(flow, reg))
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "default-src 'none'" in csp
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    assert "https://" not in page.text  # no third-party assets


async def test_interaction_opened_in_another_browser_is_refused(flow: Flow) -> None:
    reg = await flow.register()
    interaction = await _interaction(flow, reg)
    flow.client.cookies.clear()
    page, csrf = await flow.page(interaction)
    assert page.status_code == 400
    assert csrf == ""


async def test_login_without_the_page_csrf_token_is_refused(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    interaction = await _interaction(flow, reg)
    await flow.page(interaction)
    response = await flow.client.post(
        f"{interaction}/login", data={"csrf": "forged", "email": user["email"], "password": user["password"]}
    )
    assert response.status_code == 403
    assert await flow.count("authz_login_sessions") == 0


async def test_wrong_password_shows_the_login_page_again(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    interaction = await _interaction(flow, reg)
    response = await flow.login(interaction, user, password="wrong password")
    assert response.status_code == 303
    assert response.headers["location"] == interaction
    page, _ = await flow.page(interaction)
    assert "email or password is not right" in page.text
    assert 'name="password"' in page.text
    assert await flow.count("authz_login_sessions") == 0


async def test_consent_page_names_client_destination_and_scopes(flow: Flow) -> None:
    reg = await flow.register(client_name="<script>alert(1)</script> Agent")
    user = await flow.user("owner")
    interaction = await _interaction(flow, reg, scope="openid courses:read orders:read")
    await flow.login(interaction, user)
    page, _ = await flow.page(interaction)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Agent" in page.text
    assert "<script>" not in page.text
    assert "an app on this computer (port 53682)" in page.text
    assert "<strong>Courses</strong>: see" in page.text and "See courses, including drafts" in page.text
    assert "<strong>Orders</strong>: see" in page.text and "personal data" in page.text
    assert "new app" in page.text and "Registered on" in page.text
    assert "form-action 'self' http://127.0.0.1:53682" in page.headers["content-security-policy"]


async def test_deny_redirects_access_denied_and_stores_no_grant(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    callback, _, params = await flow.authorize(reg, user, decision="deny")
    assert callback["error"] == "access_denied"
    assert callback["state"] == params["state"]
    assert callback["iss"] == BASE_URL
    assert "code" not in callback
    assert await flow.count("authz_grants") == 0


async def test_role_caps_the_granted_scopes_without_refusing(flow: Flow) -> None:
    reg = await flow.register()
    student = await flow.user("student")
    tokens = await flow.tokens(reg, student, scope="openid email courses:write account:read analytics:read")
    assert tokens["scope"] == "openid email account:read"


async def test_lecturer_gets_reads_and_teaching_writes(flow: Flow) -> None:
    reg = await flow.register()
    lecturer = await flow.user("lecturer")
    tokens = await flow.tokens(reg, lecturer, scope="courses:write orders:read coupons:write school:write")
    assert tokens["scope"] == "courses:write orders:read"


async def test_second_authorization_in_the_same_browser_asks_only_for_consent(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    await flow.tokens(reg, user)
    interaction = await _interaction(flow, reg)
    page, _ = await flow.page(interaction)
    assert "/consent" in page.text
    assert 'name="password"' not in page.text


async def test_prompt_login_asks_for_the_password_again(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    await flow.tokens(reg, user)
    interaction = await _interaction(flow, reg, prompt="login")
    page, _ = await flow.page(interaction)
    assert 'name="password"' in page.text


async def test_prompt_none_without_a_session_is_login_required(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge, prompt="none")
    response = await flow.start(params)
    query = query_of(response.headers["location"])
    assert query["error"] == "login_required"
    assert query["state"] == params["state"] and query["iss"] == BASE_URL


async def test_prompt_none_with_a_session_is_consent_required_for_public_clients(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    await flow.tokens(reg, user)
    _, challenge = pkce_pair()
    response = await flow.start(flow.authorize_params(reg, challenge, prompt="none"))
    assert query_of(response.headers["location"])["error"] == "consent_required"


async def test_consent_completes_once(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    interaction = await _interaction(flow, reg)
    await flow.login(interaction, user)
    _, csrf = await flow.page(interaction)
    first = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    second = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": "approve"})
    assert first.status_code == 303 and "code=" in first.headers["location"]
    assert second.status_code == 400
    assert await flow.count("authz_codes") == 1


async def test_disabled_user_cannot_log_in(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    await flow.pool.execute("UPDATE authz_users SET disabled_at = now() WHERE id = $1::uuid", user["id"])
    interaction = await _interaction(flow, reg)
    await flow.login(interaction, user)
    page, _ = await flow.page(interaction)
    assert 'name="password"' in page.text
    assert await flow.count("authz_login_sessions") == 0


async def test_a_failed_sign_in_keeps_the_email_typed(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    await flow.login(interaction, user, password="not the right one")
    page, _ = await flow.page(interaction)
    assert "The email or password is not right." in page.text
    assert f'value="{user["email"]}"' in page.text


@pytest.mark.parametrize(("decision", "words"), [("approve", "You allowed"), ("deny", "You denied")])
async def test_a_decision_page_says_the_outcome_before_handing_back(flow: Flow, decision: str, words: str) -> None:
    reg = await flow.register()
    user = await flow.user()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, decision_page="true"))
    interaction = start.headers["location"]
    await flow.login(interaction, user)
    decided = await flow.consent(interaction, decision)
    assert decided.status_code == 303 and decided.headers["location"] == f"{interaction}/done"
    page = await flow.client.get(decided.headers["location"])
    assert page.status_code == 200 and words in page.text
    assert f'{words} the app that calls itself «<bdi class="client">Test CLI</bdi>»' in page.text  # self-declared
    target = re.search(r'href="(http://127\.0\.0\.1:53682/callback\?[^"]+)"', page.text).group(1).replace("&amp;", "&")
    answer = query_of(target)
    assert ("code" in answer) if decision == "approve" else (answer["error"] == "access_denied")
    # Back when the person chooses (WCAG 2.2.1, axe's meta-refresh): no timed refresh, a focused link.
    assert "http-equiv" not in page.text.lower() and "refresh" not in page.text.lower()
    back = re.search(r'<a class="button primary" href="([^"]+)" autofocus>Back to the app</a>', page.text)
    assert back is not None and back.group(1).replace("&amp;", "&") == target
    again = await flow.client.get(decided.headers["location"])  # once only
    assert again.status_code == 400


async def test_a_decision_page_names_an_integration_plainly_and_escapes_names(flow: Flow) -> None:
    for reg, shown in (
        (await flow.integration(name="Partner CRM"), '<h1>You allowed <bdi class="client">Partner CRM</bdi></h1>'),
        (await flow.register(client_name="A<b>B"), 'calls itself «<bdi class="client">A&lt;b&gt;B</bdi>»'),
    ):
        _, challenge = pkce_pair()
        start = await flow.start(flow.authorize_params(reg, challenge, decision_page="true"))
        interaction = start.headers["location"]
        await flow.login(interaction, await flow.user())
        decided = await flow.consent(interaction)
        page = await flow.client.get(decided.headers["location"])
        assert page.status_code == 200 and shown in page.text, page.text


async def test_a_decision_page_is_only_for_the_browser_that_decided(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, decision_page="true"))
    interaction = start.headers["location"]
    await flow.login(interaction, await flow.user())
    decided = await flow.consent(interaction)
    flow.client.cookies.clear()
    stranger = await flow.client.get(decided.headers["location"])
    assert stranger.status_code == 400 and "code=" not in stranger.text


async def test_decision_page_must_be_true_or_false(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    refused = await flow.start(flow.authorize_params(reg, challenge, decision_page="maybe"))
    assert query_of(refused.headers["location"])["error"] == "invalid_request"
