"""POST /api/oauth/register: dynamic client registration, RFC 7591 §3 (also at
`/register`, the MCP 2025-03-26 fallback path, listed in no metadata); and
GET / PUT / DELETE /api/oauth/register/{client_id}: the client configuration
endpoint, RFC 7592 §2."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, get, post, put
from litestar.params import FromPath

from courseschool.common.answers import NO_STORE
from courseschool.common.errors import InvalidClientMetadataError

from ..endpoints.registration import delete_client, read_client, register_client, update_client
from .http import RegistrationDep, client_ip, no_store_json


def _json_body(request: Request[Any, Any, Any]) -> None:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise InvalidClientMetadataError("the request body must be application/json")


@post(["/api/oauth/register", "/register"], status_code=201)
async def register(request: Request[Any, Any, Any], registration: RegistrationDep) -> Response[bytes]:
    _json_body(request)
    registered = await register_client(registration, await request.body(), ip=client_ip(request))
    return no_store_json(registered, status=201)


@get("/api/oauth/register/{client_id:str}")
async def read_registration(
    request: Request[Any, Any, Any], registration: RegistrationDep, client_id: FromPath[str]
) -> Response[bytes]:
    return no_store_json(
        await read_client(
            registration, client_id, authorization=request.headers.get("authorization"), ip=client_ip(request)
        )
    )


@put("/api/oauth/register/{client_id:str}")
async def update_registration(
    request: Request[Any, Any, Any], registration: RegistrationDep, client_id: FromPath[str]
) -> Response[bytes]:
    _json_body(request)
    body = await request.body()
    return no_store_json(
        await update_client(
            registration, client_id, body, authorization=request.headers.get("authorization"), ip=client_ip(request)
        )
    )


@delete("/api/oauth/register/{client_id:str}", status_code=204, response_headers=NO_STORE)
async def delete_registration(
    request: Request[Any, Any, Any], registration: RegistrationDep, client_id: FromPath[str]
) -> None:
    await delete_client(
        registration, client_id, authorization=request.headers.get("authorization"), ip=client_ip(request)
    )
