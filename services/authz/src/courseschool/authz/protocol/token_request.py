"""The token request: the form parsed once (RFC 6749 §3.2, §4.1.3, §6) and client
authentication (§2.3; `client_secret_post` §2.3.1, `none` for public clients per
RFC 7591 §2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from courseschool.common.errors import (
    InvalidClientError,
    InvalidRequestError,
    InvalidTargetError,
    UnauthorizedClientError,
)
from courseschool.common.resource import canonical_resource
from courseschool.common.secrets import digest, same

from .models import Client
from .ports import ClientStore

MAX_PARAM = 4096


class TokenForm(msgspec.Struct, frozen=True, kw_only=True):
    grant_type: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    code: str | None = None
    redirect_uri: str | None = None
    code_verifier: str | None = None
    refresh_token: str | None = None
    scope: str | None = None
    token: str | None = None  # revocation (RFC 7009 §2.1) and introspection (RFC 7662 §2.1)
    token_type_hint: str | None = None
    resource: tuple[str, ...] = ()


_SINGLE = tuple(f for f in msgspec.structs.fields(TokenForm) if f.name != "resource")


def parse_token_form(form: Mapping[str, Sequence[str]]) -> TokenForm:
    """§3.2: parameters sent without a value are treated as omitted; none may repeat."""
    values: dict[str, object] = {}
    for field in _SINGLE:
        got = [v for v in form.get(field.name, []) if v != ""]
        if len(got) > 1:
            raise InvalidRequestError(f"the {field.name} parameter is repeated")
        if got:
            if len(got[0]) > MAX_PARAM:
                raise InvalidRequestError(f"the {field.name} parameter is too long")
            values[field.name] = got[0]
    resources = tuple(v for v in form.get("resource", []) if v != "")
    return TokenForm(**values, resource=resources)  # type: ignore[arg-type]


async def authenticate_client(form: TokenForm, clients: ClientStore) -> Client:
    """Identify the client and check its credentials; every failure is `invalid_client`."""
    if not form.client_id:
        raise InvalidClientError("client_id is required")
    client = await clients.get(form.client_id)
    if client is None or client.disabled:
        raise InvalidClientError("client authentication failed")
    if client.is_public:
        if form.client_secret:
            raise InvalidClientError("this is a public client; it authenticates with client_id only")
        return client
    if not form.client_secret or client.secret_hash is None:
        raise InvalidClientError("client authentication failed")
    if not same(digest(form.client_secret), client.secret_hash):
        raise InvalidClientError("client authentication failed")
    return client


def check_grant_type_allowed(client: Client, grant_type: str) -> None:
    if grant_type not in client.grant_types:
        raise UnauthorizedClientError(f"this client is not registered for the {grant_type} grant")


def required(value: str | None, name: str) -> str:
    if not value:
        raise InvalidRequestError(f"{name} is required")
    return value


def resource_within_grant(requested: tuple[str, ...], granted: str) -> str:
    """RFC 8707 §2.2: a token may be bound to the resource the grant covers, never
    another; naming none keeps the grant's."""
    if not requested:
        return granted
    canon = {canonical_resource(r) for r in requested}
    if None in canon:
        raise InvalidTargetError("resource must be an absolute URI without fragment")
    if canon != {granted}:
        raise InvalidTargetError("the resource is not covered by this authorization grant")
    return granted
