"""`/internal/*` of the resource API, for the other services only (never routed
publicly): its RFC 9728 metadata and its OpenAPI part for the discovery service, and
the activity of grants for the authorization server's pages (`web/activity.py`). One
router holds them, guarded by the shared INTERNAL_TOKEN (`common.web.internal_only`:
anyone else gets 404, as if the path did not exist)."""

from __future__ import annotations

from litestar import Response, Router, get

from courseschool.common.clock import Clock
from courseschool.common.web import internal_only, json_response

from ..metadata import protected_resource_metadata
from ..openapi import resource_openapi
from ..settings import ResourceSettings
from .activity import activity_routes


def internal_router(settings: ResourceSettings, clock: Clock) -> Router:
    @get("/metadata/oauth-protected-resource", name="internal_protected_resource_metadata")
    async def internal_prm() -> Response[bytes]:
        return json_response(protected_resource_metadata(settings))

    @get("/openapi.json", name="internal_openapi")
    async def internal_openapi() -> Response[bytes]:
        return json_response(resource_openapi(settings.base_url, settings.resource_name))

    return Router(
        "/internal",
        guards=[internal_only(settings.internal_token)],
        route_handlers=[internal_prm, internal_openapi, *activity_routes(clock)],
    )
