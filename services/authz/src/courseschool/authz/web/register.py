"""POST /api/oauth/register: dynamic client registration, RFC 7591 §3."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post

from courseschool.common.errors import InvalidClientMetadataError

from ..endpoints.registration import register_client
from .http import Authz, client_ip, no_store_json


@post("/api/oauth/register", status_code=201)
async def register(request: Request[Any, Any, Any], authz: Authz) -> Response[bytes]:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise InvalidClientMetadataError("the request body must be application/json")
    registered = await register_client(authz, await request.body(), ip=client_ip(request))
    return no_store_json(registered, status=201)
