"""The form endpoints (token, revocation, introspection) are raw routes of their own
(web/http.py `form_post`): what the framework did for them is checked here as a client
sees it. Methods: OPTIONS names them, any other is a 405 that says which to use. Bodies:
past 64 KiB a 413, announced or streamed, with nothing done; the form read as sent
(`+` and percent-escapes, a charset parameter, every repeated value kept for the
protocol code to refuse)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.web.http import MAX_BODY, form_fields
from courseschool.common.asgi import AppLifespan
from courseschool.common.clock import FrozenClock
from courseschool.common.errors import InvalidRequestError
from courseschool.common.web import server_app

from .flow import BASE_URL, Flow, Lifecycle

PATHS = ["/api/oauth/token", "/token", "/api/oauth/revoke", "/api/oauth/introspect"]
FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize("path", PATHS)
async def test_options_names_the_methods_and_others_are_refused(flow: Flow, path: str) -> None:
    options = await flow.client.options(path)
    assert options.status_code == 204 and options.content == b""
    assert options.headers["allow"] == "POST, OPTIONS"
    for method in ("GET", "PUT", "DELETE", "HEAD"):
        refused = await flow.client.request(method, path)
        assert refused.status_code == 405, method
        assert refused.headers["allow"] == "POST, OPTIONS"
        assert refused.headers["cache-control"] == "no-store"
        assert refused.headers["content-type"] == "application/json"
        if method != "HEAD":
            assert refused.json() == {
                "error": "method_not_allowed",
                "error_description": f"{method} is not allowed here; use POST",
            }


@pytest.mark.parametrize("path", PATHS)
async def test_a_body_past_the_limit_is_413_announced_or_streamed(flow: Flow, path: str) -> None:
    reg = await flow.register()
    padding = "x" * MAX_BODY
    body = f"grant_type=client_credentials&client_id={reg['client_id']}&token=t&pad={padding}".encode()

    async def streamed() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]

    async def state() -> tuple[int, int]:  # rate-limit counts and stored rows: nothing may move
        return await flow.redis.dbsize(), await flow.count("authz_events")

    before = await state()
    announced = await flow.client.post(path, content=body, headers=FORM)
    sent = await flow.client.post(path, content=streamed(), headers=FORM)
    for response in (announced, sent):
        assert response.status_code == 413, response.text
        assert response.json() == {
            "error": "request_too_large",
            "error_description": f"the request body must be at most {MAX_BODY} bytes",
        }
        assert response.headers["cache-control"] == "no-store"
    assert "content-length" not in sent.request.headers  # the second one really was streamed
    assert await state() == before
    just_under = await flow.client.post(path, content=body[: MAX_BODY - 1], headers=FORM)
    assert just_under.status_code != 413


async def test_the_form_is_read_as_sent(flow: Flow) -> None:
    reg = await flow.register()
    issued = await flow.tokens(reg)
    assert "courses:read" in issued["scope"].split()
    # `+` for a space and a percent-escaped colon, in a body with a charset parameter.
    body = (
        f"grant_type=refresh_token&refresh_token={issued['refresh_token']}&client_id={reg['client_id']}"
        "&scope=openid+courses%3Aread"
    )
    refreshed = await flow.client.post(
        "/token", content=body.encode(), headers={"content-type": "application/x-www-form-urlencoded; charset=UTF-8"}
    )
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["scope"] == "openid courses:read"
    assert refreshed.headers["cache-control"] == "no-store" and refreshed.headers["pragma"] == "no-cache"
    assert refreshed.headers["x-request-id"]
    # RFC 6749 §3.2: a parameter sent twice is refused; the form keeps both values to say so.
    twice = await flow.client.post(
        "/api/oauth/token",
        content=f"grant_type=refresh_token&grant_type=refresh_token&client_id={reg['client_id']}".encode(),
        headers=FORM,
    )
    assert twice.status_code == 400 and twice.json()["error"] == "invalid_request"
    assert "grant_type" in twice.json()["error_description"]


async def test_revocation_and_introspection_answer_from_the_raw_route(flow: Flow) -> None:
    reg = await flow.register()
    rs = await flow.integration()
    issued = await flow.tokens(reg)
    life = Lifecycle(flow)
    assert (await life.introspect(rs, issued["access_token"]))["active"] is True
    revoked = await life.revoke(reg, issued["refresh_token"])
    assert revoked.status_code == 200 and revoked.content == b""
    assert revoked.headers["cache-control"] == "no-store"
    assert (await life.introspect(rs, issued["access_token"]))["active"] is False


def test_form_fields_follow_the_form_encoding() -> None:
    fields = form_fields("Application/X-WWW-Form-Urlencoded ; charset=utf-8", b"a=1&a=2&b=&c&d=%E2%9C%93+x&e=%FF")
    assert fields == {"a": ["1", "2"], "b": [""], "c": [""], "d": ["\u2713 x"], "e": ["\ufffd"]}
    for content_type in (None, "application/json", "multipart/form-data; boundary=x"):
        with pytest.raises(InvalidRequestError, match="application/x-www-form-urlencoded"):
            form_fields(content_type, b"a=1")
    with pytest.raises(InvalidRequestError, match="NUL"):
        form_fields("application/x-www-form-urlencoded", b"a=%00")


async def test_the_address_limited_is_the_callers_behind_a_trusted_proxy(
    authz_settings: AuthzSettings, clean_db: asyncpg.Pool, redis_client: object, clock: FrozenClock
) -> None:
    """The raw route reads the address the proxy-header layer wrote: the per-address
    limit counts the caller named by a trusted proxy, not the proxy."""
    settings = AuthzSettings(**{**msgspec.structs.asdict(authz_settings), "rate_token_per_ip": "2/60"})
    app = create_app(settings, clock=clock)
    behind_proxy = server_app(app, [app], forwarded_allow_ips="127.0.0.1")
    async with (
        AppLifespan(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=behind_proxy, client=("127.0.0.1", 4000)), base_url=BASE_URL
        ) as client,
    ):

        async def token_from(address: str) -> int:
            form = {"grant_type": "refresh_token", "refresh_token": "nope", "client_id": "nobody"}
            response = await client.post("/api/oauth/token", data=form, headers={"X-Forwarded-For": address})
            return response.status_code

        assert [await token_from("203.0.113.1") for _ in range(3)] == [401, 401, 429]
        assert await token_from("203.0.113.2") == 401
