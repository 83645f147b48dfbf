"""The internal admin API (`/internal/admin/...`): never routed publicly. Every route is
on `ADMIN_ROUTER`, whose guard (`admin_only`) lets through only `Authorization: Bearer
<ADMIN_TOKEN>` (compared in constant time) before the handler runs; without ADMIN_TOKEN
the API does not exist (404). Each handler parses its input and calls the
`AdminService` its router hands it (`admin`); nothing else happens here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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


class Invitation(msgspec.Struct, forbid_unknown_fields=True):
    school: str
    email: str
    name: str
    role: str


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


# async: Litestar runs a synchronous guard in a worker thread, a hop this check does not need
async def admin_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
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


# Most routes call one AdminService method with what the request names: nothing, the
# thing in the path (`ref`), a JSON body's fields as keywords, or both. The method is
# given by reference (`AdminService.create_user`), so a renamed one is a type error.
Handler = Callable[..., Awaitable[Response[bytes]]]
Method = Callable[..., Awaitable[Any]]


def _named(handler: Handler, method: Method) -> Handler:
    handler.__name__ = handler.__qualname__ = method.__name__
    return handler


def _call(method: Method) -> Handler:
    async def handler(admin: Admin) -> Response[bytes]:
        return no_store_json(await method(admin))

    return _named(handler, method)


def _call_on(method: Method) -> Handler:
    async def handler(ref: FromPath[str], admin: Admin) -> Response[bytes]:
        return no_store_json(await method(admin, ref))

    return _named(handler, method)


def _call_with(method: Method, kind: type[msgspec.Struct], status: int = 200) -> Handler:
    async def handler(request: Request, admin: Admin) -> Response[bytes]:
        fields = msgspec.structs.asdict(await _body(request, kind))
        return no_store_json(await method(admin, **fields), status=status)

    return _named(handler, method)


def _call_on_with(method: Method, kind: type[msgspec.Struct]) -> Handler:
    async def handler(ref: FromPath[str], request: Request, admin: Admin) -> Response[bytes]:
        fields = msgspec.structs.asdict(await _body(request, kind))
        return no_store_json(await method(admin, ref, **fields))

    return _named(handler, method)


CALLS = [
    get("/schools")(_call(AdminService.list_schools)),
    post("/schools", status_code=201)(_call_with(AdminService.create_school, NewSchool, 201)),
    post("/users", status_code=201)(_call_with(AdminService.create_user, NewUser, 201)),
    post("/invitations", status_code=201)(_call_with(AdminService.invite_user, Invitation, 201)),
    get("/users/{ref:str}")(_call_on(AdminService.user)),
    post("/users/{ref:str}/disable", status_code=200)(_call_on(AdminService.disable_user)),
    post("/users/{ref:str}/enable", status_code=200)(_call_on(AdminService.enable_user)),
    post("/users/{ref:str}/role", status_code=200)(_call_on_with(AdminService.set_role, RoleChange)),
    post("/users/{ref:str}/reset-password", status_code=200)(_call_on_with(AdminService.reset_password, PasswordReset)),
    post("/users/{ref:str}/reset-second-factors", status_code=200)(_call_on(AdminService.reset_second_factors)),
    post("/integrations", status_code=201)(_call_with(AdminService.create_integration, NewIntegration, 201)),
    get("/clients")(_call(AdminService.list_clients)),
    get("/clients/{ref:str}")(_call_on(AdminService.client)),
    post("/clients/{ref:str}/disable", status_code=200)(_call_on(AdminService.disable_client)),
    delete("/clients/{ref:str}", status_code=200)(_call_on(AdminService.delete_client)),
    post("/grants/{ref:str}/revoke", status_code=200)(_call_on(AdminService.revoke_grant)),
    get("/keys")(_call(AdminService.list_keys)),
    post("/keys/rotate", status_code=200)(_call_with(AdminService.rotate_key, KeyRotation)),
    get("/domains")(_call(AdminService.list_domains)),
    post("/domains", status_code=201)(_call_with(AdminService.trust_domain, TrustedDomain, 201)),
    delete("/domains/{ref:str}", status_code=200)(_call_on(AdminService.untrust_domain)),
]


@get("/users")
async def list_users(request: Request, admin: Admin) -> Response[bytes]:
    return no_store_json(await admin.list_users(school=request.query_params.get("school")))


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
    route_handlers=[*CALLS, list_users, list_grants, list_actions],
    guards=[admin_only],
    dependencies={"admin": Provide(provide_admin, sync_to_thread=False)},
)
