"""Every `/internal` and admin route of the authorization server carries its guard: the
admin API's (`web/admin.admin_only`: ADMIN_TOKEN) under `/internal/admin`, and the
internal token's (`common.web.internal_only`: INTERNAL_TOKEN) on every other
`/internal` path. The guards sit on their routers, so a handler cannot forget the
check; this walk of the app's routes fails for a route added anywhere else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Litestar, get

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.web.admin import admin_only
from courseschool.common.web import internal_only

# Each router gets its own guard from the factory (it is given the app's token): what
# they share is the factory's function, whose name each of them carries.
INTERNAL_GUARD = internal_only(None).__qualname__


def required_guard(path: str) -> str | None:
    """The guard a route at `path` must carry ("admin" or "internal"), or None for a public one."""
    segments = path.strip("/").split("/")
    if segments[0] == "internal":
        return "admin" if segments[1:2] == ["admin"] else "internal"
    return "admin" if "admin" in segments else None


def kind_of(guard: Callable[..., Any]) -> str | None:
    if guard is admin_only:
        return "admin"
    return "internal" if getattr(guard, "__qualname__", None) == INTERNAL_GUARD else None


def guards_of(handler: Any) -> list[str | None]:
    """The guards a handler runs, declared on it or on any layer above it (router, app), by kind."""
    return [kind_of(guard) for layer in handler.ownership_layers for guard in (layer.guards or [])]


def walk(app: Litestar) -> list[tuple[str, Any]]:
    """(path, handler) for every handler of every route of the app."""
    out = []
    for route in app.routes:
        handlers = getattr(route, "route_handlers", None) or [route.route_handler]  # type: ignore[attr-defined]
        out += [(route.path, handler) for handler in handlers]
    return out


def unguarded(app: Litestar) -> list[str]:
    """The routes ("METHOD /path") that lack the guard their path requires."""
    return sorted(
        f"{','.join(sorted(getattr(handler, 'http_methods', None) or ['*']))} {path}"
        for path, handler in walk(app)
        if (guard := required_guard(path)) is not None and guard not in guards_of(handler)
    )


def _app() -> Litestar:
    return create_app(AuthzSettings(key_encryption_key="x"))


def test_every_internal_and_admin_route_carries_its_guard() -> None:
    app = _app()
    guarded = [path for path, _ in walk(app) if required_guard(path) is not None]
    admin_routes = [path for path in guarded if required_guard(path) == "admin"]
    assert len(admin_routes) >= 20 and len(guarded) - len(admin_routes) >= 5  # the walk sees them all
    assert unguarded(app) == []


def test_a_route_added_without_its_guard_is_caught() -> None:
    app = _app()

    @get("/internal/forgotten", sync_to_thread=False)
    def forgotten() -> str:
        return "internal data"

    @get("/internal/admin/forgotten", sync_to_thread=False)
    def forgotten_admin() -> str:
        return "admin data"

    app.register(forgotten)
    app.register(forgotten_admin)
    assert unguarded(app) == [  # the OPTIONS handlers Litestar adds too: they run a router's guards
        "GET /internal/admin/forgotten",
        "GET /internal/forgotten",
        "OPTIONS /internal/admin/forgotten",
        "OPTIONS /internal/forgotten",
    ]
