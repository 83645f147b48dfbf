"""The resource API's `/internal` routes sit under one router whose guard asks for the
shared INTERNAL_TOKEN before anything of the route runs: no handler repeats the check,
and none can forget it. Anyone else gets 404, as if the path did not exist."""

from __future__ import annotations

import httpx
from litestar.routes import HTTPRoute

from courseschool.common.settings import load_settings
from courseschool.resource_api.app import create_app
from courseschool.resource_api.settings import ResourceSettings

TOKEN = "internal-test-token"
BASE_URL = "http://127.0.0.1:8000"


def resource_app():
    """Built as a server builds it; never started (the guard answers before any state)."""
    return create_app(load_settings(ResourceSettings, environ={}, base_url=BASE_URL, internal_token=TOKEN))


def internal_routes() -> list[HTTPRoute]:
    return [r for r in resource_app().routes if isinstance(r, HTTPRoute) and r.path.startswith("/internal")]


def test_every_internal_route_has_the_internal_guard() -> None:
    routes = internal_routes()
    assert {r.path for r in routes} >= {
        "/internal/metadata/oauth-protected-resource",
        "/internal/openapi.json",
        "/internal/activity",
    }
    for route in routes:
        for handler in route.route_handlers:
            guards = [getattr(guard, "func", guard).__name__ for guard in handler.resolve_guards()]
            assert guards == ["internal_caller"], (route.path, guards)


async def test_internal_routes_do_not_exist_for_anyone_without_the_token() -> None:
    app = resource_app()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
        for route in internal_routes():
            for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": TOKEN}):
                response = await client.get(route.path, headers=headers, params={"grant_id": "x"})
                assert response.status_code == 404, (route.path, headers, response.text)
                assert response.json()["error"] == "not_found"
        right = {"Authorization": f"Bearer {TOKEN}"}
        metadata = await client.get("/internal/metadata/oauth-protected-resource", headers=right)
        assert metadata.status_code == 200
        assert metadata.json()["resource"] == BASE_URL
