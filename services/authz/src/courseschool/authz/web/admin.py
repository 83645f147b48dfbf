"""The internal admin API (`/internal/admin/...`): never routed publicly, and
answering only to `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time).
Each handler parses its input and calls `AdminService`; nothing else happens here."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from courseschool.common.errors import InvalidRequestError, InvalidTokenError, NotFoundError
from courseschool.common.secrets import same
from courseschool.common.web import NO_STORE

from ..admin import AdminService
from ..service import AuthzService

Authz = NamedDependency[AuthzService]
BASE = "/internal/admin"


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


class RoleChange(msgspec.Struct, forbid_unknown_fields=True):
    role: str


class PasswordReset(msgspec.Struct, forbid_unknown_fields=True):
    password: str | None = None


class KeyRotation(msgspec.Struct, forbid_unknown_fields=True):
    alg: str
    immediate: bool = False


def _admin(request: Request, authz: AuthzService) -> AdminService:
    expected = authz.settings.admin_token
    if not expected:
        raise NotFoundError("not found")
    if not same(request.headers.get("authorization", ""), f"Bearer {expected}"):
        raise InvalidTokenError("the admin credential is missing or wrong")
    return AdminService(authz)


async def _body(request: Request, kind: type[msgspec.Struct]) -> Any:
    try:
        return msgspec.json.decode(await request.body() or b"{}", type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise InvalidRequestError(f"invalid body: {exc}") from None


def _json(body: Any, status: int = 200) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json", headers=NO_STORE)


@get(f"{BASE}/schools", include_in_schema=False)
async def list_schools(request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).list_schools())


@post(f"{BASE}/schools", include_in_schema=False, status_code=201)
async def create_school(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewSchool)
    return _json(await admin.create_school(slug=body.slug, name=body.name), 201)


@get(f"{BASE}/users", include_in_schema=False)
async def list_users(request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).list_users(school=request.query_params.get("school")))


@post(f"{BASE}/users", include_in_schema=False, status_code=201)
async def create_user(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewUser)
    return _json(await admin.create_user(**msgspec.structs.asdict(body)), 201)


@get(f"{BASE}/users/{{ref:str}}", include_in_schema=False)
async def show_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).user(ref))


@post(f"{BASE}/users/{{ref:str}}/disable", include_in_schema=False, status_code=200)
async def disable_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).disable_user(ref))


@post(f"{BASE}/users/{{ref:str}}/enable", include_in_schema=False, status_code=200)
async def enable_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).enable_user(ref))


@post(f"{BASE}/users/{{ref:str}}/role", include_in_schema=False, status_code=200)
async def set_role(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, RoleChange)
    return _json(await admin.set_role(ref, body.role))


@post(f"{BASE}/users/{{ref:str}}/reset-password", include_in_schema=False, status_code=200)
async def reset_password(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, PasswordReset)
    return _json(await admin.reset_password(ref, body.password))


@post(f"{BASE}/integrations", include_in_schema=False, status_code=201)
async def create_integration(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewIntegration)
    return _json(await admin.create_integration(**msgspec.structs.asdict(body)), 201)


@get(f"{BASE}/clients", include_in_schema=False)
async def list_clients(request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).list_clients())


@get(f"{BASE}/clients/{{client_id:str}}", include_in_schema=False)
async def show_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).client(client_id))


@post(f"{BASE}/clients/{{client_id:str}}/disable", include_in_schema=False, status_code=200)
async def disable_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).disable_client(client_id))


@delete(f"{BASE}/clients/{{client_id:str}}", include_in_schema=False, status_code=200)
async def delete_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).delete_client(client_id))


@get(f"{BASE}/grants", include_in_schema=False)
async def list_grants(request: Request, authz: Authz) -> Response[bytes]:
    query = request.query_params
    return _json(await _admin(request, authz).list_grants(
        user=query.get("user"), client=query.get("client"), include_revoked=query.get("all") == "true",
    ))


@post(f"{BASE}/grants/{{grant_id:str}}/revoke", include_in_schema=False, status_code=200)
async def revoke_grant(grant_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).revoke_grant(grant_id))


@get(f"{BASE}/keys", include_in_schema=False)
async def list_keys(request: Request, authz: Authz) -> Response[bytes]:
    return _json(await _admin(request, authz).list_keys())


@post(f"{BASE}/keys/rotate", include_in_schema=False, status_code=200)
async def rotate_key(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, KeyRotation)
    return _json(await admin.rotate_key(body.alg, immediate=body.immediate))


ADMIN_ROUTES = [
    list_schools, create_school, list_users, create_user, show_user, disable_user, enable_user, set_role,
    reset_password, create_integration, list_clients, show_client, disable_client, delete_client, list_grants,
    revoke_grant, list_keys, rotate_key,
]
