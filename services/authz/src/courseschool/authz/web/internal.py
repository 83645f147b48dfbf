"""`/internal/*` for the other services (never routed publicly, and answering only to
INTERNAL_TOKEN): the metadata and OpenAPI parts for the discovery service, the
current revocations for resource servers (re)joining the feed, and schools."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.params import FromPath

from courseschool.common.errors import NotFoundError

from ..metadata import authorization_server_metadata, openid_configuration
from ..openapi import authz_openapi
from .http import Authz, check_internal, json_response, no_store_json


@get("/internal/metadata/oauth-authorization-server")
async def internal_as_metadata(request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    check_internal(request, authz.settings.internal_token)
    return json_response(authorization_server_metadata(authz.settings))


@get("/internal/metadata/openid-configuration")
async def internal_oidc_metadata(request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    check_internal(request, authz.settings.internal_token)
    return json_response(openid_configuration(authz.settings))


@get("/internal/openapi.json")
async def internal_openapi(request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    check_internal(request, authz.settings.internal_token)
    return json_response(authz_openapi(authz.settings.base_url))


@get("/internal/revocations")
async def internal_revocations(request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    """For resource servers (re)joining the revocation feed."""
    check_internal(request, authz.settings.internal_token)
    return no_store_json(await authz.revoker.current())


@get("/internal/schools/{ref:str}")
async def internal_school(ref: FromPath[str], request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    """A school by id or slug (`id`, `slug`, `name`): resource servers learn of schools
    an administrator created here (the authorization server owns schools)."""
    check_internal(request, authz.settings.internal_token)
    school = await authz.admin_store.school(ref[:100])
    if school is None:
        raise NotFoundError("no such school")
    return no_store_json({"id": school["id"], "slug": school["slug"], "name": school["name"]})


INTERNAL_ROUTES = [
    internal_as_metadata,
    internal_oidc_metadata,
    internal_openapi,
    internal_revocations,
    internal_school,
]
