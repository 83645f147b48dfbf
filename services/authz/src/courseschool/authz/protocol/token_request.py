"""The token request: the form parsed once (RFC 6749 §3.2, §4.1.3, §6) and client
authentication (§2.3; `client_secret_post` §2.3.1, `none` for public clients per
RFC 7591 §2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from courseschool.common.errors import InvalidClientError, InvalidRequestError, UnauthorizedClientError
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
