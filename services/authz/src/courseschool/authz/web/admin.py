"""The internal admin API (`/internal/admin/...`): never routed publicly. Every route is
on `ADMIN_ROUTER`, whose guard (`admin_only`) lets through only `Authorization: Bearer
<ADMIN_TOKEN>` (compared in constant time) before the handler runs; without ADMIN_TOKEN
the API does not exist (404). Each handler parses its input and calls the
`AdminService` its router hands it (`admin`); nothing else happens here."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, Router, delete, get, post
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide
from litestar.handlers import BaseRouteHandler
from litestar.params import FromPath

from courseschool.common.errors import InvalidRequestError, InvalidTokenError, NotFoundError, fit_description
from courseschool.common.jsonbody import decode_json
from courseschool.common.secrets import same

from ..endpoints.admin import AdminService
from .http import AdministrationDep, client_ip, no_store_json

PATH = "/internal/admin"
Admin = NamedDependency[AdminService]


class NewSchool(msgspec.Struct, forbid_unknown_fields=True):
    slug: str
    name: str


class NewUser(msgspec.Struct, forbid_unknown_fields=True):
    school: str
    email: str
    name: str
    role: str
    password: str | None = None


class NewIntegration(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    redirect_uris: list[str]
    scope: str | None = None
    refresh: bool = True
    auth_method: str = "client_secret_post"


class RoleChange(msgspec.Struct, forbid_unknown_fields=True):
    role: str


class PasswordReset(msgspec.Struct, forbid_unknown_fields=True):
    password: str | None = None


class KeyRotation(msgspec.Struct, forbid_unknown_fields=True):
    alg: str
    immediate: bool = False


class TrustedDomain(msgspec.Struct, forbid_unknown_fields=True):
    host: str


def admin_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The guard of every admin route: no ADMIN_TOKEN set, the API does not exist (404);
    a missing or wrong credential is 401."""
    expected = connection.app.state.authz.settings.admin_token
    if not expected:
        raise NotFoundError("not found")
    if not same(connection.headers.get("authorization", ""), f"Bearer {expected}"):
        raise InvalidTokenError("the admin credential is missing or wrong")


def provide_admin(request: Request[Any, Any, Any], administration: AdministrationDep) -> AdminService:
    """Every administrative action of a request is the API's (`admin`), from its caller's address."""
    return AdminService(administration, actor="admin", source=client_ip(request))


async def _body(request: Request, kind: type[msgspec.Struct]) -> Any:
    try:
        return decode_json(await request.body() or b"{}", into=kind)
    except msgspec.ValidationError as exc:
        raise InvalidRequestError(f"invalid body: {fit_description(str(exc))}") from None


@get("/schools")
async def list_schools(admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_schools())


@post("/schools", status_code=201)
async def create_school(request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, NewSchool)
    return no_store_json(await admin.create_school(slug=body.slug, name=body.name), status=201)


@get("/users")
async def list_users(request: Request, admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_users(school=request.query_params.get("school")))


@post("/users", status_code=201)
async def create_user(request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, NewUser)
    return no_store_json(await admin.create_user(**msgspec.structs.asdict(body)), status=201)


@get("/users/{ref:str}")
async def show_user(ref: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.user(ref))


@post("/users/{ref:str}/disable", status_code=200)
async def disable_user(ref: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.disable_user(ref))


@post("/users/{ref:str}/enable", status_code=200)
async def enable_user(ref: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.enable_user(ref))


@post("/users/{ref:str}/role", status_code=200)
async def set_role(ref: FromPath[str], request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, RoleChange)
    return no_store_json(await admin.set_role(ref, body.role))


@post("/users/{ref:str}/reset-password", status_code=200)
async def reset_password(ref: FromPath[str], request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, PasswordReset)
    return no_store_json(await admin.reset_password(ref, body.password))


@post("/integrations", status_code=201)
async def create_integration(request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, NewIntegration)
    return no_store_json(await admin.create_integration(**msgspec.structs.asdict(body)), status=201)


@get("/clients")
async def list_clients(admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_clients())


@get("/clients/{client_id:str}")
async def show_client(client_id: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.client(client_id))


@post("/clients/{client_id:str}/disable", status_code=200)
async def disable_client(client_id: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.disable_client(client_id))


@delete("/clients/{client_id:str}", status_code=200)
async def delete_client(client_id: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.delete_client(client_id))


@get("/grants")
async def list_grants(request: Request, admin: Admin) -> Response[bytes]:
    query = request.query_params
    return no_store_json(
        await admin.list_grants(
            user=query.get("user"),
            client=query.get("client"),
            include_revoked=query.get("all") == "true",
        )
    )


@post("/grants/{grant_id:str}/revoke", status_code=200)
async def revoke_grant(grant_id: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.revoke_grant(grant_id))


@get("/keys")
async def list_keys(admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_keys())


@post("/keys/rotate", status_code=200)
async def rotate_key(request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, KeyRotation)
    return no_store_json(await admin.rotate_key(body.alg, immediate=body.immediate))


@get("/domains")
async def list_domains(admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_domains())


@post("/domains", status_code=201)
async def trust_domain(request: Request, admin: Admin) -> Response[bytes]:
    body = await _body(request, TrustedDomain)
    return no_store_json(await admin.trust_domain(body.host), status=201)


@delete("/domains/{host:str}", status_code=200)
async def untrust_domain(host: FromPath[str], admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.untrust_domain(host))


@get("/audit")
async def list_actions(request: Request, admin: Admin) -> Response[bytes]:
    query = request.query_params
    limit = query.get("limit", "100")
    if not limit.isdigit():
        raise InvalidRequestError("limit must be a whole number")
    before = query.get("before")
    if before is not None and not (before.isdigit() and len(before) <= 18):
        raise InvalidRequestError("before must be an event id (a whole number from 1)")
    return no_store_json(
        await admin.list_actions(
            kind=query.get("kind"),
            user=query.get("user"),
            client=query.get("client"),
            school=query.get("school"),
            action=query.get("action"),
            since=query.get("since"),
            until=query.get("until"),
            before=int(before) if before is not None else None,
            limit=int(limit),
        )
    )


ADMIN_ROUTER = Router(
    PATH,
    route_handlers=[
        list_actions,
        list_schools,
        create_school,
        list_users,
        create_user,
        show_user,
        disable_user,
        enable_user,
        set_role,
        reset_password,
        create_integration,
        list_clients,
        show_client,
        disable_client,
        delete_client,
        list_grants,
        revoke_grant,
        list_keys,
        rotate_key,
        list_domains,
        trust_domain,
        untrust_domain,
    ],
    guards=[admin_only],
    dependencies={"admin": Provide(provide_admin, sync_to_thread=False)},
)
