"""The resource API's scope guard fails closed: a route whose handler takes the caller
(the `principal`) must declare the scope it needs, or the app is refused at start-up
with the route named. One test walks every route of every app to prove each
scope-taking route declares its scope; another shows an undeclared one is refused."""

from __future__ import annotations

import pytest
from litestar import Litestar, get
from litestar.di import NamedDependency
from litestar.routes import HTTPRoute

from courseschool.common.settings import load_settings
from courseschool.platform.app import build
from courseschool.resource_api import app as resource_app
from courseschool.resource_api.areas.registry import AREA_SPECS
from courseschool.resource_api.auth.verifier import Principal
from courseschool.resource_api.settings import ResourceSettings
from courseschool.resource_api.web.principal import UndeclaredScopeError, declared_scopes, takes_principal

BASE_URL = "http://127.0.0.1:8000"


def every_app(kek: str) -> dict[str, Litestar]:
    """The three apps, built as the all-in-one builds them (never started: the routes are
    fixed when an app is made)."""
    shared = {
        "base_url": BASE_URL,
        "database_url": "postgresql://unused@127.0.0.1:1/unused",
        "redis_url": "redis://127.0.0.1:1/0",
        "key_encryption_key": kek,
        "internal_token": "internal-test-token",
    }
    return {app.state["service_name"]: app for app in build(shared).apps}


def test_every_scope_taking_route_of_every_app_declares_its_scope(kek: str) -> None:
    apps = every_app(kek)
    assert set(apps) == {"authz", "resource_api", "discovery"}
    taking: dict[str, list[str]] = {}
    for service, app in apps.items():
        for route in app.routes:
            if not isinstance(route, HTTPRoute):
                continue
            for handler in route.route_handlers:
                if takes_principal(handler):
                    scopes = declared_scopes(handler)
                    assert scopes, f"{service}: {route.path} ({handler.name}) takes the principal, declares no scope"
                    assert all(scope.endswith((":read", ":write")) for scope in scopes), (route.path, scopes)
                    taking.setdefault(service, []).append(handler.name)
    # Not vacuous: every area's routes but the file download take the caller.
    assert len(taking["resource_api"]) == sum(
        _routes_taking_the_caller(spec.kind, spec.writable) for spec in AREA_SPECS
    )


def _routes_taking_the_caller(kind: str, writable: bool) -> int:
    return {"collection": 5 if writable else 2, "singleton": 2 if writable else 1, "computed": 1, "upload": 1}[kind]


def test_a_route_that_takes_the_principal_without_a_declared_scope_is_refused_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @get("/api/v1/forgotten", name="forgotten_list")
    async def forgotten(principal: NamedDependency[Principal]) -> None:  # no opt=guard(...)
        return None

    generated = resource_app.all_routes
    monkeypatch.setattr(resource_app, "all_routes", lambda: [*generated(), forgotten])
    settings = load_settings(ResourceSettings, environ={}, base_url=BASE_URL)
    with pytest.raises(UndeclaredScopeError, match=r"GET /api/v1/forgotten \(forgotten_list\)"):
        resource_app.create_app(settings)
    monkeypatch.setattr(resource_app, "all_routes", generated)
    resource_app.create_app(settings)  # the app as shipped starts
