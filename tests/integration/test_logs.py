"""Logs are structured and never hold a token, code, secret or password."""

from __future__ import annotations

import structlog

from .flow import Flow, query_of


async def test_a_whole_flow_logs_no_secret(flow: Flow) -> None:
    with structlog.testing.capture_logs() as events:
        reg = await flow.register(token_endpoint_auth_method="client_secret_post")
        user = await flow.user()
        callback, verifier, _ = await flow.authorize(reg, user)
        tokens = (await flow.exchange(reg, callback["code"], verifier)).json()
        await flow.exchange(reg, callback["code"], verifier)  # reuse: logged as a security event
        await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    secrets = [
        reg["client_secret"],
        callback["code"],
        verifier,
        tokens["access_token"],
        tokens["refresh_token"],
        tokens["id_token"],
        user["password"],
    ]
    names = {e["event"] for e in events}
    assert {"client_registered", "login_succeeded", "consent_given", "token_issued", "code_reused"} <= names
    for event in events:
        text = repr(event)
        for secret in secrets:
            assert secret not in text, f"{event['event']} leaks a secret"


async def test_refused_login_is_logged_without_the_password(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    with structlog.testing.capture_logs() as events:
        start = await flow.start(flow.authorize_params(reg, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        await flow.login(start.headers["location"], user, password="hunter2-wrong")
    failed = [e for e in events if e["event"] == "login_failed"]
    assert failed and failed[0]["subject"] == user["id"] and failed[0]["audit"] is True
    assert all("hunter2-wrong" not in repr(e) for e in events)
    assert query_of(start.headers["location"]) == {}
