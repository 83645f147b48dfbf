"""Every page and form of the school's apps (`/oauth/school/apps`: the list, its
confirmations, ending access, blocks, the policy, approvals, requests) is for the
school's owners and admins: `web.school_apps.stewards_only`, declared once on their
routers, so a handler cannot forget the check. This walk of the app's routes fails for
a route added there without it."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Router, get

from courseschool.authz.web.school_apps import PATH, stewards_only

from .test_internal_routes_are_guarded import _app, walk


def school_routes(app: Litestar) -> list[tuple[str, Any]]:
    return [(path, handler) for path, handler in walk(app) if path == PATH or path.startswith(f"{PATH}/")]


def not_for_stewards_only(app: Litestar) -> list[str]:
    """The school's apps routes ("METHODS /path") that lack the stewards' guard."""
    return sorted(
        f"{','.join(sorted(getattr(handler, 'http_methods', None) or ['*']))} {path}"
        for path, handler in school_routes(app)
        if stewards_only not in [g for layer in handler.ownership_layers for g in (layer.guards or [])]
    )


def test_every_school_apps_route_is_for_the_schools_stewards() -> None:
    app = _app()
    assert len(school_routes(app)) >= 11  # the list, confirm, end, block, unblock, policy, approve, decline...
    assert not_for_stewards_only(app) == []


def test_a_route_added_without_the_guard_is_caught() -> None:
    app = _app()

    @get("/forgotten", sync_to_thread=False)
    def forgotten() -> str:
        return "the school's apps"

    app.register(Router(PATH, route_handlers=[forgotten]))
    # The OPTIONS handler Litestar adds too: it runs a router's guards.
    assert not_for_stewards_only(app) == [f"GET {PATH}/forgotten", f"OPTIONS {PATH}/forgotten"]
