"""The internal admin API (`/internal/admin/...`): never routed publicly, and
answering only to `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time).
Each handler parses its input and calls `AdminService`; nothing else happens here."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.params import FromPath

from courseschool.common.errors import InvalidRequestError, InvalidTokenError, NotFoundError
from courseschool.common.jsonbody import decode_json
from courseschool.common.secrets import same

from ..components import Components
from ..endpoints.admin import AdminService
from .http import Authz, client_ip, no_store_json

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


def _admin(request: Request, authz: Components) -> AdminService:
    expected = authz.settings.admin_token
    if not expected:
        raise NotFoundError("not found")
    if not same(request.headers.get("authorization", ""), f"Bearer {expected}"):
        raise InvalidTokenError("the admin credential is missing or wrong")
    return AdminService(authz, actor="admin", source=client_ip(request))


async def _body(request: Request, kind: type[msgspec.Struct]) -> Any:
    try:
        return decode_json(await request.body() or b"{}", into=kind)
    except msgspec.ValidationError as exc:
        raise InvalidRequestError(f"invalid body: {exc}") from None


@get(f"{BASE}/schools")
async def list_schools(request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).list_schools())


@post(f"{BASE}/schools", status_code=201)
async def create_school(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewSchool)
    return no_store_json(await admin.create_school(slug=body.slug, name=body.name), status=201)


@get(f"{BASE}/users")
async def list_users(request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).list_users(school=request.query_params.get("school")))


@post(f"{BASE}/users", status_code=201)
async def create_user(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewUser)
    return no_store_json(await admin.create_user(**msgspec.structs.asdict(body)), status=201)


@get(f"{BASE}/users/{{ref:str}}")
async def show_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).user(ref))


@post(f"{BASE}/users/{{ref:str}}/disable", status_code=200)
async def disable_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).disable_user(ref))


@post(f"{BASE}/users/{{ref:str}}/enable", status_code=200)
async def enable_user(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).enable_user(ref))


@post(f"{BASE}/users/{{ref:str}}/role", status_code=200)
async def set_role(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, RoleChange)
    return no_store_json(await admin.set_role(ref, body.role))


@post(f"{BASE}/users/{{ref:str}}/reset-password", status_code=200)
async def reset_password(ref: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, PasswordReset)
    return no_store_json(await admin.reset_password(ref, body.password))


@post(f"{BASE}/integrations", status_code=201)
async def create_integration(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, NewIntegration)
    return no_store_json(await admin.create_integration(**msgspec.structs.asdict(body)), status=201)


@get(f"{BASE}/clients")
async def list_clients(request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).list_clients())


@get(f"{BASE}/clients/{{client_id:str}}")
async def show_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).client(client_id))


@post(f"{BASE}/clients/{{client_id:str}}/disable", status_code=200)
async def disable_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).disable_client(client_id))


@delete(f"{BASE}/clients/{{client_id:str}}", status_code=200)
async def delete_client(client_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).delete_client(client_id))


@get(f"{BASE}/grants")
async def list_grants(request: Request, authz: Authz) -> Response[bytes]:
    query = request.query_params
    return no_store_json(
        await _admin(request, authz).list_grants(
            user=query.get("user"),
            client=query.get("client"),
            include_revoked=query.get("all") == "true",
        )
    )


@post(f"{BASE}/grants/{{grant_id:str}}/revoke", status_code=200)
async def revoke_grant(grant_id: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).revoke_grant(grant_id))


@get(f"{BASE}/keys")
async def list_keys(request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).list_keys())


@post(f"{BASE}/keys/rotate", status_code=200)
async def rotate_key(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, KeyRotation)
    return no_store_json(await admin.rotate_key(body.alg, immediate=body.immediate))


@get(f"{BASE}/domains")
async def list_domains(request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).list_domains())


@post(f"{BASE}/domains", status_code=201)
async def trust_domain(request: Request, authz: Authz) -> Response[bytes]:
    admin, body = _admin(request, authz), await _body(request, TrustedDomain)
    return no_store_json(await admin.trust_domain(body.host), status=201)


@delete(f"{BASE}/domains/{{host:str}}", status_code=200)
async def untrust_domain(host: FromPath[str], request: Request, authz: Authz) -> Response[bytes]:
    return no_store_json(await _admin(request, authz).untrust_domain(host))


@get(f"{BASE}/audit")
async def list_actions(request: Request, authz: Authz) -> Response[bytes]:
    query = request.query_params
    limit = query.get("limit", "100")
    if not limit.isdigit():
        raise InvalidRequestError("limit must be a whole number")
    before = query.get("before")
    if before is not None and not (before.isdigit() and len(before) <= 18):
        raise InvalidRequestError("before must be an event id (a whole number from 1)")
    return no_store_json(
        await _admin(request, authz).list_actions(
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


ADMIN_ROUTES = [
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
]
