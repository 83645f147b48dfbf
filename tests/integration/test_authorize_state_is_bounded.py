"""Security review finding 2: an anonymous GET of /oauth/authorize must not be able to
fill Redis. Every stored field is bounded (a clear `invalid_request` back to the
client once its redirect URI is known good, a page before that), the endpoint is
rate-limited per address, and a pending request stays small."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlencode

import httpx
import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.scopes import SCOPES

from .conftest import serve
from .flow import BASE_URL, REDIRECT_URI, Flow, pkce_pair, query_of


def _with(base: AuthzSettings, **changes: object) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(base), **changes})


async def _stored_sizes(flow: Flow) -> list[int]:
    return [await flow.redis.strlen(k) async for k in flow.redis.scan_iter(match="authz:interaction:*")]


@pytest.mark.parametrize(
    "extra",
    [
        {"login_hint": "a" * 60_000},
        {"login_hint": "x" * 321},
        {"state": "s" * 2049},
        {"state": "s" * 9000},
        {"nonce": "n" * 513},
        {"scope": " ".join(["openid"] * 1000)},
        {f"unknown_{i}": "v" * 100 for i in range(100)},  # nothing stored, but the query as a whole is too large
    ],
    ids=["login_hint-60kB", "login_hint-321", "state", "state-9kB", "nonce", "scope", "total-query"],
)
async def test_oversized_fields_go_back_as_invalid_request_and_store_nothing(flow: Flow, extra: dict[str, str]) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge, **extra)
    response = await flow.start(params)
    assert response.status_code == 303
    location = response.headers["location"]
    assert len(location) < 10_000
    assert location.startswith(REDIRECT_URI + "?"), location
    answer = query_of(location)
    assert answer["error"] == "invalid_request" and answer["iss"] == BASE_URL
    # RFC 6749 §4.1.2.1 echoes state, but not one longer than a whole request may be
    echoed = params["state"] if len(params["state"]) <= 8192 else None
    assert answer.get("state") == echoed
    assert await flow.redis_keys() == 0


async def test_oversized_request_for_an_unvalidated_client_is_a_page(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge, login_hint="a" * 60_000, redirect_uri="https://evil.example/cb")
    response = await flow.start(params)
    assert response.status_code == 400 and "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert await flow.redis_keys() == 0


async def test_largest_accepted_request_stays_small_in_redis(flow: Flow) -> None:
    """Every field at its largest accepted value: the pending request stays a few kB."""
    long_redirect = "http://127.0.0.1:53682/" + "p" * 1900
    reg = await flow.register(redirect_uris=[long_redirect])
    _, challenge = pkce_pair()
    every_scope = " ".join(s.name for s in SCOPES)
    params = flow.authorize_params(
        reg, challenge, scope=every_scope, state="s" * 2048, nonce="n" * 512, login_hint="h" * 320
    )
    response = await flow.start(params)
    assert response.status_code == 303 and response.headers["location"].startswith("/oauth/interaction/")
    (size,) = await _stored_sizes(flow)
    assert size <= 8 * 1024


async def test_an_ordinary_request_is_stored_in_well_under_a_kilobyte(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    response = await flow.start(flow.authorize_params(reg, challenge, login_hint="ada@example.test"))
    assert response.status_code == 303
    (size,) = await _stored_sizes(flow)
    assert size < 1024


@pytest.fixture
async def limited(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    async with serve(create_app(_with(authz_settings, rate_authorize_per_ip="3/3600"), clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_authorize_is_rate_limited_per_address_with_a_page(limited: Flow) -> None:
    reg = await limited.register()
    _, challenge = pkce_pair()
    query = "/oauth/authorize?" + urlencode(limited.authorize_params(reg, challenge))
    answers = [await limited.client.get(query) for _ in range(4)]
    assert [a.status_code for a in answers] == [303, 303, 303, 429]
    refused = answers[-1]
    assert refused.headers["content-type"].startswith("text/html")
    assert 0 < int(refused.headers["retry-after"]) <= 3600
    assert "location" not in refused.headers
    assert await limited.redis_keys() == 3
    # another address has its own allowance
    other = httpx.ASGITransport(app=limited.client.app, client=("192.0.2.7", 4000))
    async with httpx.AsyncClient(transport=other, base_url=BASE_URL) as elsewhere:
        assert (await elsewhere.get(query)).status_code == 303


async def test_refused_requests_count_against_the_address_too(limited: Flow) -> None:
    for _ in range(3):
        assert (await limited.client.get("/oauth/authorize?client_id=nobody")).status_code == 400
    assert (await limited.client.get("/oauth/authorize?client_id=nobody")).status_code == 429


@pytest.mark.parametrize("value", ["120", "0/60", "x/y"])
def test_malformed_authorize_rate_is_refused(authz_settings, value: str) -> None:
    with pytest.raises(ValueError, match="RATE_AUTHORIZE_PER_IP"):
        _with(authz_settings, rate_authorize_per_ip=value)


def test_default_authorize_rate_is_generous(authz_settings) -> None:
    rate = authz_settings.rate("rate_authorize_per_ip")
    assert rate.limit / rate.window >= 1  # a school behind one address signs in many people at once
