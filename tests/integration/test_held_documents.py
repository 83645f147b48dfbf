"""The front door of the public documents (`common.web.HeldDocuments`): JWKS and the
discovery documents answered before the router and the framework, with the same answer,
request id and metrics as the apps' own routes, and everything else left to them."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from courseschool.authz.keys import SigningKeys
from courseschool.common.asgi import AppLifespan
from courseschool.common.web import HeldDocuments, server_app, service_app
from courseschool.platform.app import build
from courseschool.platform.router import PathRouter

from .flow import BASE_URL

JWKS = "/api/oauth/jwks"
METADATA = "/.well-known/oauth-authorization-server"


class Behind:
    """What stands behind the front door: the platform's router, counting what reaches it."""

    def __init__(self, router: PathRouter) -> None:
        self.router = router
        self.reached: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.reached.append(scope["path"])
        await self.router(scope, receive, send)


@dataclass
class Platform:
    client: httpx.AsyncClient
    router: PathRouter
    behind: Behind


def _shared(database_url: str, redis_url: str, kek: str, **more: Any) -> dict[str, Any]:
    return {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": redis_url,
        "key_encryption_key": kek,
        "internal_token": "internal-test-token",
        **more,
    }


async def _platform(shared: dict[str, Any]) -> AsyncIterator[Platform]:
    router = build(shared)
    behind = Behind(router)
    async with AppLifespan(router):
        transport = httpx.ASGITransport(app=HeldDocuments(behind, router.apps))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield Platform(client, router, behind)


@pytest.fixture
async def platform(database_url, redis_url, kek, clean_db, redis_client) -> AsyncIterator[Platform]:
    async for running in _platform(_shared(database_url, redis_url, kek)):
        yield running


def _authz(router: PathRouter) -> Any:
    (app,) = [app for app in router.apps if app.state["service_name"] == "authz"]
    return app


def _served(service: str, route: str, method: str = "GET", status: str = "200") -> float:
    labels = {"service": service, "route": route, "method": method, "status": status}
    return REGISTRY.get_sample_value("http_requests_total", labels) or 0.0


async def test_jwks_is_answered_in_front_with_the_routes_answer(platform: Platform) -> None:
    ring = _authz(platform.router).state.authz.keys.ring
    before = _served("authz", JWKS)
    response = await platform.client.get(JWKS, headers={"X-Request-ID": "keys-7"})
    assert platform.behind.reached == []
    assert response.status_code == 200 and response.content == ring.jwks.body
    assert response.headers["etag"] == ring.jwks.etag
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "public, max-age=300"
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["x-request-id"] == "keys-7"
    assert _served("authz", JWKS) == before + 1
    # The apps' own route gives the same answer.
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=platform.router), base_url=BASE_URL) as routes:
        own = await routes.get(JWKS)
    assert own.content == response.content and own.headers["etag"] == response.headers["etag"]


async def test_head_conditional_get_and_a_query_are_answered_in_front(platform: Platform) -> None:
    first = await platform.client.get(JWKS)
    head = await platform.client.head(JWKS)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(first.content))
    again = await platform.client.get(JWKS, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    with_query = await platform.client.get(JWKS, params={"v": "1"})
    assert with_query.status_code == 200 and with_query.content == first.content
    assert platform.behind.reached == []


async def test_other_methods_and_other_spellings_go_to_the_apps(platform: Platform) -> None:
    refused = await platform.client.post(JWKS, content=b"{}")
    assert refused.status_code == 405 and refused.json()["error"] == "method_not_allowed"
    assert refused.headers["allow"] == "GET, HEAD"
    # The same path with a letter percent-encoded: not answered in front; the apps decide.
    await platform.client.get("/api/oauth/jwk%73")
    await platform.client.get("/api/oauth/jwks/")
    await platform.client.get("/API/oauth/jwks")
    assert platform.behind.reached == [JWKS, JWKS, "/api/oauth/jwks/", "/API/oauth/jwks"]


async def test_a_new_key_set_is_answered_at_once(platform: Platform) -> None:
    keys = _authz(platform.router).state.authz.keys
    before = (await platform.client.get(JWKS)).json()
    await keys.store.rotate_now("ES256")
    await keys.maintain()
    after = await platform.client.get(JWKS)
    assert {k["kid"] for k in after.json()["keys"]} > {k["kid"] for k in before["keys"]}
    assert after.content == keys.ring.jwks.body and platform.behind.reached == []


async def test_keys_not_loaded_leave_the_answer_to_the_route(platform: Platform) -> None:
    state = _authz(platform.router).state
    # As after a start with PostgreSQL down: the keys are loaded by the maintenance loop later.
    state.authz = dataclasses.replace(state.authz, keys=SigningKeys(state.authz.keys.store))
    response = await platform.client.get(JWKS)
    assert platform.behind.reached == [JWKS]
    assert response.status_code == 503 and response.json()["error"] == "temporarily_unavailable"


async def test_discovery_documents_are_answered_in_front_once_fetched(platform: Platform) -> None:
    before = _served("discovery", METADATA)
    first = await platform.client.get(METADATA)  # the cache is empty: the route fetches it
    assert platform.behind.reached == [METADATA]
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-protected-resource", "/openapi.json"):
        await platform.client.get(path)
    reached = list(platform.behind.reached)
    again = await platform.client.get(METADATA)
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-protected-resource", "/openapi.json"):
        assert (await platform.client.get(path)).status_code == 200
    walkthrough = await platform.client.get("/auth.md")  # rendered at start: held from the first request
    assert platform.behind.reached == reached
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert walkthrough.headers["content-type"] == "text/markdown; charset=utf-8"
    assert _served("discovery", METADATA) == before + 2


async def test_a_document_past_its_time_goes_to_the_route(database_url, redis_url, kek, clean_db, redis_client) -> None:
    async for running in _platform(_shared(database_url, redis_url, kek, metadata_cache_ttl=0)):
        for _ in range(3):
            assert (await running.client.get(METADATA)).status_code == 200
        assert running.behind.reached == [METADATA] * 3
        assert (await running.client.get(JWKS)).status_code == 200
        assert running.behind.reached == [METADATA] * 3


def test_every_held_path_is_routed_to_the_app_that_holds_it(database_url, redis_url, kek) -> None:
    router = build(_shared(database_url, redis_url, kek))  # not started: nothing is read
    held = {path: app for app in router.apps for path in app.state["held_documents"]}
    assert set(held) == {
        JWKS,
        METADATA,
        "/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource",
        "/openapi.json",
        "/auth.md",
    }
    for path, app in held.items():
        assert router.pick({"type": "http", "path": path, "raw_path": path.encode(), "headers": []}) is app, path


def test_two_apps_may_not_hold_one_path() -> None:
    first = service_app("one", route_handlers=[], ready_checks={}, held={JWKS: lambda: None})
    second = service_app("two", route_handlers=[], ready_checks={}, held={JWKS: lambda: None})
    with pytest.raises(ValueError, match="two apps hold a document at /api/oauth/jwks"):
        server_app(first, [first, second], "")
