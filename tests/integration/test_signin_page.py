"""The standalone sign-in page (/oauth/signin), for the person's own pages: the same
sign-in as the authorization flow's login page (rate limit, lockout), a form bound to
the page's own cookie (login CSRF), and afterwards only our own pages."""

from __future__ import annotations

from .apps_page import CSRF, browser, page
from .flow import PASSWORD, Flow, pkce_pair

WHERE = "/oauth/signin?next=%2Foauth%2Fapps"


async def _signin_token(flow: Flow, query: str = "") -> str:
    shown = await flow.client.get(f"/oauth/signin{query}")
    assert shown.status_code == 200, shown.text
    assert "cs_signin=" in shown.headers["set-cookie"] and "HttpOnly" in shown.headers["set-cookie"]
    return CSRF.search(shown.text).group(1)


async def test_not_signed_in_the_apps_page_sends_to_sign_in_and_back(flow: Flow) -> None:
    user = await flow.user()
    away = await flow.client.get("/oauth/apps")
    assert away.status_code == 303 and away.headers["location"] == WHERE
    csrf = await _signin_token(flow, "?next=%2Foauth%2Fapps")
    done = await flow.client.post(
        "/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": PASSWORD, "next": "/oauth/apps"}
    )
    assert done.status_code == 303 and done.headers["location"] == "/oauth/apps"
    assert "cs_session=" in done.headers["set-cookie"]
    shown, _ = await page(flow)
    assert "Your connected apps" in shown.text and user["email"] in shown.text
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 1


async def test_a_wrong_password_shows_the_page_again_with_the_login_pages_message(flow: Flow) -> None:
    user = await flow.user()
    csrf = await _signin_token(flow)
    wrong = await flow.client.post("/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": "nope"})
    assert wrong.status_code == 303 and wrong.headers["location"] == f"{WHERE}&failed=1"
    again = await flow.client.get(wrong.headers["location"])
    assert 'role="alert">The email or password is not right.' in again.text
    assert await flow.count("authz_login_sessions") == 0


async def test_a_form_not_from_this_page_signs_nobody_in(flow: Flow) -> None:
    user = await flow.user()
    credentials = {"email": user["email"], "password": PASSWORD}
    no_cookie = await flow.client.post("/oauth/signin", data={"csrf": "0" * 64, **credentials})
    assert no_cookie.status_code == 403 and "text/html" in no_cookie.headers["content-type"]
    await _signin_token(flow)  # the page's cookie is set now
    for csrf in ("", "0" * 64):
        forged = await flow.client.post("/oauth/signin", data={"csrf": csrf, **credentials})
        assert forged.status_code == 403
    async with browser(flow) as other:  # a token of another browser's page
        others = await _signin_token(other)
    assert (await flow.client.post("/oauth/signin", data={"csrf": others, **credentials})).status_code == 403
    assert await flow.count("authz_login_sessions") == 0


async def test_after_sign_in_only_our_own_pages(flow: Flow) -> None:
    user = await flow.user()
    shown = await flow.client.get("/oauth/signin?next=https%3A%2F%2Fevil.example%2F")
    assert 'name="next" value="/oauth/apps"' in shown.text and "evil" not in shown.text
    for target in ("https://evil.example/", "//evil.example/", "/oauth/logout"):
        flow.client.cookies.clear()
        csrf = await _signin_token(flow)
        done = await flow.client.post(
            "/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": PASSWORD, "next": target}
        )
        assert done.status_code == 303 and done.headers["location"] == "/oauth/apps", target


async def test_failures_here_count_towards_the_login_pages_lockout(flow: Flow) -> None:
    """One sign-in: the lockout an account earns on this page holds on the authorization
    flow's login page too."""
    user = await flow.user()
    threshold = flow.client.app.state.authz.settings.login_lockout_threshold  # type: ignore[attr-defined]
    csrf = await _signin_token(flow)
    for _ in range(threshold):
        failed = await flow.client.post("/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": "x"})
        assert failed.status_code == 303
    locked = await flow.client.post("/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": PASSWORD})
    assert locked.status_code == 429 and "retry-after" in locked.headers
    reg = await flow.register()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    at_login = await flow.login(start.headers["location"], user)
    assert at_login.status_code == 429
    assert await flow.count("authz_login_sessions") == 0
