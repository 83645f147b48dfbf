"""`/internal/*` for the other services (never routed publicly): the metadata and
OpenAPI parts for the discovery service, the current revocations for resource servers
(re)joining the feed, and schools. Every route is on the router `internal_router` makes,
whose guard (`common.web.internal_only`, the resource API's too) answers 404 to anyone
without INTERNAL_TOKEN before the handler runs."""

from __future__ import annotations

from litestar import Response, Router, get
from litestar.params import FromPath

from courseschool.common.errors import NotFoundError
from courseschool.common.origins import CLIENT_ORIGINS_PATH, ClientOriginList
from courseschool.common.web import internal_only

from ..metadata import authorization_server_metadata, openid_configuration
from ..openapi import authz_openapi
from ..settings import AuthzSettings
from .http import InternalDep, json_response, no_store_json

PATH = "/internal"


@get("/metadata/oauth-authorization-server")
async def internal_as_metadata(internal: InternalDep) -> Response[bytes]:
    return json_response(authorization_server_metadata(internal.settings))


@get("/metadata/openid-configuration")
async def internal_oidc_metadata(internal: InternalDep) -> Response[bytes]:
    return json_response(openid_configuration(internal.settings))


@get("/openapi.json")
async def internal_openapi(internal: InternalDep) -> Response[bytes]:
    return json_response(authz_openapi(internal.settings.base_url))


@get("/revocations")
async def internal_revocations(internal: InternalDep) -> Response[bytes]:
    """For resource servers (re)joining the revocation feed."""
    return no_store_json(await internal.revoker.current())


@get("/schools/{ref:str}")
async def internal_school(ref: FromPath[str], internal: InternalDep) -> Response[bytes]:
    """A school by id or slug (`id`, `slug`, `name`): resource servers learn of schools
    an administrator created here (the authorization server owns schools)."""
    school = await internal.admin_store.school(ref[:100])
    if school is None:
        raise NotFoundError("no such school")
    return no_store_json({"id": school["id"], "slug": school["slug"], "name": school["name"]})


@get(CLIENT_ORIGINS_PATH.removeprefix(PATH))
async def internal_client_origins(internal: InternalDep) -> Response[bytes]:
    """For resource servers' CORS (common/cors.py): the registered origins, read now (a
    resource server asks at most once a second, and keeps what it gets)."""
    return no_store_json(ClientOriginList(sorted(await internal.client_origins.origins())))


def internal_router(settings: AuthzSettings) -> Router:
    """Every `/internal` route, behind `Authorization: Bearer <INTERNAL_TOKEN>` (anyone
    else: 404, as for a path that is not there)."""
    return Router(
        PATH,
        route_handlers=[
            internal_as_metadata,
            internal_oidc_metadata,
            internal_openapi,
            internal_revocations,
            internal_school,
            internal_client_origins,
        ],
        guards=[internal_only(settings.internal_token)],
    )
