"""A refused code exchange or refresh is logged with its cause (`request_refused`, the
error's private `detail`); the answer holds the RFC 6749 §5.2 error and its description
only, never the detail."""

from __future__ import annotations

from typing import Any

import httpx
import structlog

from courseschool.common.clock import FrozenClock

from .flow import Flow, Lifecycle


def _refusal(events: list[dict[str, Any]]) -> dict[str, Any]:
    (refused,) = [e for e in events if e["event"] == "request_refused"]
    return refused


def _assert_private(response: httpx.Response, detail: str) -> None:
    assert response.status_code == 400
    assert set(response.json()) == {"error", "error_description"}
    assert detail not in response.text


async def test_an_unknown_refresh_token_is_logged_as_unknown(flow: Flow) -> None:
    reg = await flow.register()
    with structlog.testing.capture_logs() as events:
        response = await Lifecycle(flow).refresh(reg, "no-such-token")
    refused = _refusal(events)
    assert refused["error"] == "invalid_grant"
    assert refused["detail"] == "no refresh token has this value"
    _assert_private(response, refused["detail"])


async def test_a_refresh_by_another_client_is_logged_with_both_clients(flow: Flow) -> None:
    reg, other = await flow.register(), await flow.register()
    tokens = await flow.tokens(reg)
    with structlog.testing.capture_logs() as events:
        response = await Lifecycle(flow).refresh(other, tokens["refresh_token"])
    detail = _refusal(events)["detail"]
    assert reg["client_id"] in detail and other["client_id"] in detail
    _assert_private(response, detail)
    assert response.json()["error_description"] == "the refresh token is invalid, expired or revoked"


async def test_a_late_reuse_is_logged_as_a_reuse_outside_the_window(flow: Flow, clock: FrozenClock) -> None:
    reg = await flow.register()
    first = await flow.tokens(reg)
    life = Lifecycle(flow)
    assert (await life.refresh(reg, first["refresh_token"])).status_code == 200
    clock.advance(11)
    with structlog.testing.capture_logs() as events:
        response = await life.refresh(reg, first["refresh_token"])
    detail = _refusal(events)["detail"]
    assert "retry window" in detail and "revoked" in detail
    _assert_private(response, detail)


async def test_a_code_sent_with_another_redirect_uri_is_logged_with_both(flow: Flow) -> None:
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, await flow.user())
    sent = "http://127.0.0.1:53682/elsewhere"
    with structlog.testing.capture_logs() as events:
        response = await flow.exchange(reg, callback["code"], verifier, redirect_uri=sent)
    detail = _refusal(events)["detail"]
    assert sent in detail and reg["redirect_uris"][0] in detail
    _assert_private(response, detail)


async def test_a_used_code_is_logged_as_used(flow: Flow) -> None:
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, await flow.user())
    assert (await flow.exchange(reg, callback["code"], verifier)).status_code == 200
    with structlog.testing.capture_logs() as events:
        response = await flow.exchange(reg, callback["code"], verifier)
    detail = _refusal(events)["detail"]
    assert "redeemed before" in detail
    _assert_private(response, detail)
    assert response.json()["error_description"] == "the authorization code is invalid, expired or already used"
