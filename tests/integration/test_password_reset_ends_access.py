"""Finding 10: an administrator's password reset ended nothing; the sessions and grants
of whoever held the old password survived it. Now a reset ends both."""

from __future__ import annotations

from courseschool.authz.endpoints.admin import AdminService

from .flow import Flow, Lifecycle, pkce_pair, query_of


async def test_password_reset_ends_sessions_and_grants(flow: Flow) -> None:
    user = await flow.user("owner")
    reg = await flow.register()
    tokens = await flow.tokens(reg, user)
    _, challenge = pkce_pair()
    silent = await flow.start(flow.authorize_params(reg, challenge, prompt="none"))
    # Signed in (a public client always asks for consent, so prompt=none says so):
    assert query_of(silent.headers["location"])["error"] == "consent_required"

    result = await AdminService(flow.client.app.state.authz.administration).reset_password(
        user["email"], "a brand new password"
    )
    assert result["grants_ended"] == 1

    life = Lifecycle(flow)
    refreshed = await life.refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    assert await life.userinfo_status(tokens["access_token"]) == 401
    silent = await flow.start(flow.authorize_params(reg, challenge, prompt="none"))
    assert query_of(silent.headers["location"])["error"] == "login_required"
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 0


async def test_the_new_password_signs_in(flow: Flow) -> None:
    user = await flow.user("owner")
    await AdminService(flow.client.app.state.authz.administration).reset_password(user["email"], "a brand new password")
    flow.client.cookies.clear()
    tokens = await flow.tokens(await flow.register(), {**user, "password": "a brand new password"})
    assert tokens["access_token"]
