"""The token request: the form parsed once (RFC 6749 §3.2, §4.1.3, §6) and client
authentication (§2.3; `client_secret_basic` and `client_secret_post` §2.3.1, `none`
for public clients per RFC 7591 §2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from courseschool.common.bearer import BasicCredentials, basic_refusal
from courseschool.common.errors import (
    InvalidClientError,
    InvalidRequestError,
    InvalidTargetError,
    UnauthorizedClientError,
    fit_description,
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


class PresentedCredentials(msgspec.Struct, frozen=True):
    """Who the request says it is, and how it said so (§2.3)."""

    client_id: str
    secret: str | None
    method: str  # "client_secret_basic", "client_secret_post" or "none"
    in_header: bool  # the id came in an Authorization: Basic header


def presented_credentials(form: TokenForm, basic: BasicCredentials | None) -> PresentedCredentials:
    """§2.3: one authentication method per request. Basic carries the id (and the secret,
    empty for a public client's library); the form may repeat the same `client_id` but
    not carry a secret as well. An id or secret outside the characters of Appendix A
    names no client: `invalid_client`."""
    _check_characters(form, basic)
    if basic is not None:
        if form.client_secret:
            raise InvalidRequestError(
                "the client authenticated twice: send client_secret either in the Basic header or in the form"
            )
        if form.client_id and form.client_id != basic.client_id:
            raise InvalidRequestError("client_id in the form differs from the one in the Authorization header")
        method = "client_secret_basic" if basic.secret else "none"
        return PresentedCredentials(basic.client_id, basic.secret or None, method, True)
    if not form.client_id:
        raise InvalidClientError("client_id is required (in the form body, or in an HTTP Basic Authorization header)")
    method = "client_secret_post" if form.client_secret else "none"
    return PresentedCredentials(form.client_id, form.client_secret, method, False)


def _is_vschar(value: str) -> bool:
    """Appendix A.1 and A.2: `client_id` and `client_secret` are `*VSCHAR`, %x20-7E."""
    return all(" " <= ch <= "~" for ch in value)


def _check_characters(form: TokenForm, basic: BasicCredentials | None) -> None:
    """No control character (NUL above all), nor anything beyond ASCII, reaches a lookup."""
    if basic is not None and not (_is_vschar(basic.client_id) and _is_vschar(basic.secret)):
        raise basic_refusal("client_id and client_secret are printable ASCII (RFC 6749 Appendix A.1, A.2)")
    for value in (form.client_id, form.client_secret):
        if value is not None and not _is_vschar(value):
            raise InvalidClientError("client_id and client_secret are printable ASCII (RFC 6749 Appendix A.1, A.2)")


_HOW = {
    "none": "send client_id in the form body and no client_secret (this is a public client)",
    "client_secret_post": "send client_id and client_secret in the form body, not in an Authorization header",
    "client_secret_basic": "send client_id and client_secret in an HTTP Basic Authorization header "
    "(each form-encoded, RFC 6749 section 2.3.1), not in the form body",
}


async def authenticate_client(presented: PresentedCredentials, clients: ClientStore) -> Client:
    """Identify the client and check its credentials with the method it registered;
    every failure is `invalid_client`, its description says what to change. A public
    client's id alone in a Basic header (empty password) is that client's `none`."""
    client = await clients.get(presented.client_id)
    if client is None or client.disabled:
        raise _refused(presented, "the client_id is unknown to this server or was removed: register the client again")
    registered = client.token_endpoint_auth_method
    if presented.method != registered:
        raise _refused(presented, f"this client is registered with {registered}: {_HOW[registered]}")
    if client.is_public:
        return client
    if presented.secret is None or client.secret_hash is None:
        raise _refused(presented, "client authentication failed")
    if not same(digest(presented.secret), client.secret_hash):
        raise _refused(presented, "client authentication failed: the client_secret is not this client's")
    return client


def _refused(presented: PresentedCredentials, description: str) -> InvalidClientError:
    # RFC 6749 §5.2: a client that tried the Authorization header gets 401 with its scheme's challenge.
    return basic_refusal(description) if presented.in_header else InvalidClientError(description)


def check_grant_type_allowed(client: Client, grant_type: str) -> None:
    if grant_type not in client.grant_types:
        raise UnauthorizedClientError(f"this client is not registered for the {fit_description(grant_type)} grant")


def required(value: str | None, name: str) -> str:
    if not value:
        raise InvalidRequestError(f"{name} is required", detail=f"the token request has no {name}")
    return value


def resource_within_grant(requested: tuple[str, ...], granted: str) -> str:
    """RFC 8707 §2.2: a token may be bound to the resource the grant covers, never
    another; naming none keeps the grant's."""
    if not requested:
        return granted
    canon = {canonical_resource(r) for r in requested}
    if None in canon:
        raise InvalidTargetError(
            "resource must be an absolute URI without fragment", detail=f"resource {requested!r:.300} is malformed"
        )
    if canon != {granted}:
        raise InvalidTargetError(
            "the resource is not covered by this authorization grant",
            detail=f"asked for {sorted(c for c in canon if c)!r:.300}; the grant covers {granted}",
        )
    return granted
