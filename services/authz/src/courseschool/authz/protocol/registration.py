"""Dynamic client registration, RFC 7591 §2 (metadata) and §3.2 (responses), and the
client configuration endpoint of RFC 7592 (read, update, delete with the registration
access token).

Registration is open to native clients whose redirect URIs are loopback addresses
(RFC 8252 §7.3). Fixed HTTPS callbacks exist only as integrations that an
administrator creates; such a URI here is refused with `invalid_redirect_uri` and
the request stores nothing. Clients never choose their own `client_id` or secret.
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import urlsplit

import msgspec

from courseschool.common.errors import InvalidClientMetadataError, InvalidRedirectUriError, fit_description
from courseschool.common.jsonbody import decode_json
from courseschool.common.scopes import format_scope, parse_scope, requested_scope, unknown_scopes
from courseschool.common.secrets import digest, same

from .client_names import name_problem, reserved_name_problem
from .models import Client
from .redirect_uris import is_loopback_redirect_uri

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
SECRET_METHODS = AUTH_METHODS[1:]  # a confidential client's (RFC 6749 §2.3.1)
GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ("code",)
ID_TOKEN_ALGS = ("RS256", "ES256")
MAX_REDIRECT_URIS = 10
LINK_FIELDS = ("client_uri", "policy_uri", "tos_uri")
MAX_LINK_LENGTH = 2000


class ClientMetadata(msgspec.Struct, kw_only=True):
    """The metadata a client sends (RFC 7591 §2). Members we do not use are ignored (§2)."""

    redirect_uris: list[str] | None = None
    client_name: str | None = None
    application_type: str = "native"
    token_endpoint_auth_method: str = "none"
    grant_types: list[str] = msgspec.field(default_factory=lambda: list(GRANT_TYPES))
    response_types: list[str] = msgspec.field(default_factory=lambda: list(RESPONSE_TYPES))
    scope: str | None = None
    id_token_signed_response_alg: str = "RS256"
    # RFC 9449 §5.2: the client always uses DPoP; a token request without a proof is refused.
    dpop_bound_access_tokens: bool = False
    client_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None


class ClientUpdate(ClientMetadata, kw_only=True):
    """RFC 7592 §2.2: the whole metadata again, with the client's own id (and its secret,
    which must then be the current one). The server-set fields a client may echo
    (registration_access_token, registration_client_uri, client_id_issued_at,
    client_secret_expires_at) are ignored like any unknown member."""

    client_id: str | None = None
    client_secret: str | None = None


M = TypeVar("M", bound=ClientMetadata)


def is_confidential(auth_method: str) -> bool:
    return auth_method != "none"


def parse_metadata(body: bytes) -> ClientMetadata:
    """The body as client metadata (§2), its size and depth bounded before decoding."""
    return _parse(body, ClientMetadata)


def parse_update(body: bytes) -> ClientUpdate:
    """The body of an RFC 7592 §2.2 update, checked like a registration."""
    return _parse(body, ClientUpdate)


def _parse(body: bytes, into: type[M]) -> M:
    try:
        meta = decode_json(body, into=into, invalid=InvalidClientMetadataError, what="the client metadata")
    except msgspec.ValidationError as exc:
        raise InvalidClientMetadataError(f"client metadata is invalid: {fit_description(str(exc))}") from None
    return validate_metadata(meta)


def validate_metadata(meta: M) -> M:
    """Check every rule; return the metadata with defaults applied and scope normalised."""
    _check_redirect_uris(meta.redirect_uris)
    if meta.token_endpoint_auth_method not in AUTH_METHODS:
        raise InvalidClientMetadataError(f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}")
    if not meta.grant_types or any(g not in GRANT_TYPES for g in meta.grant_types):
        raise InvalidClientMetadataError(f"grant_types may only hold {', '.join(GRANT_TYPES)}")
    if "authorization_code" not in meta.grant_types:
        raise InvalidClientMetadataError("grant_types must include authorization_code")
    if meta.response_types != ["code"]:
        raise InvalidClientMetadataError("response_types may only hold code")
    if meta.application_type != "native":
        raise InvalidClientMetadataError(
            "application_type must be native; web clients with fixed callbacks are registered integrations"
        )
    problem = name_problem(meta.client_name) if meta.client_name is not None else None
    if problem:
        raise InvalidClientMetadataError(problem)
    if meta.id_token_signed_response_alg not in ID_TOKEN_ALGS:
        raise InvalidClientMetadataError(f"id_token_signed_response_alg must be one of {', '.join(ID_TOKEN_ALGS)}")
    for field in LINK_FIELDS:
        problem = link_problem(getattr(meta, field))
        if problem:
            raise InvalidClientMetadataError(f"{field} {problem}")
    if meta.scope is not None:
        # RFC 7591 §2 `scope`: what the client asks for without `scope` (RFC 6749 §3.3);
        # a scope this server ignores (`offline_access`) is dropped, never refused.
        names = requested_scope(meta.scope)
        unknown = unknown_scopes(names)
        if (not names and not parse_scope(meta.scope)) or unknown:
            raise InvalidClientMetadataError(f"unknown scope: {fit_description(' '.join(unknown)) or '(empty)'}")
        meta.scope = format_scope(names) or None
    meta.grant_types = [g for g in GRANT_TYPES if g in meta.grant_types]
    return meta


def link_problem(value: str | None) -> str | None:
    """Why a page a client says describes it (RFC 7591 §2: `client_uri`, `policy_uri`,
    `tos_uri`) cannot be shown as a link, or None. Only https, with a host and without
    user-info (which would let the link text read as another host)."""
    if value is None:
        return None
    if not value or len(value) > MAX_LINK_LENGTH or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in value):
        return f"must be an https URL of at most {MAX_LINK_LENGTH} characters, without spaces or control characters"
    try:
        parts = urlsplit(value)
        usable = parts.scheme == "https" and bool(parts.hostname) and "@" not in parts.netloc
    except ValueError:  # a malformed port or IPv6 literal
        usable = False
    return None if usable else "must be an https URL with a host and no user-info"


def check_name_is_not_reserved(meta: ClientMetadata, integration_names: list[str]) -> None:
    """A self-declared name may not read as the platform's own name or an administrator's
    integration's name (see `client_names`): the pages would show it like theirs.
    RFC 7591 §3.2.2: invalid_client_metadata."""
    problem = reserved_name_problem(meta.client_name, integration_names) if meta.client_name is not None else None
    if problem:
        raise InvalidClientMetadataError(problem)


def _check_redirect_uris(uris: list[str] | None) -> None:
    if not uris:
        raise InvalidRedirectUriError("redirect_uris must list at least one loopback URI")
    if len(uris) > MAX_REDIRECT_URIS:
        raise InvalidRedirectUriError(f"at most {MAX_REDIRECT_URIS} redirect_uris may be registered")
    for uri in uris:
        if not is_loopback_redirect_uri(uri):
            raise InvalidRedirectUriError(
                "redirect URIs must be http on a loopback host (127.0.0.1, [::1] or localhost), "
                "without fragment or user-info; fixed https callbacks are registered integrations"
            )


def check_update(update: ClientUpdate, current: Client) -> None:
    """RFC 7592 §2.2: the body names this client, a secret it carries is the current one,
    and a public client stays public (a secret is only ever shown at registration)."""
    if update.client_id != current.client_id:
        raise InvalidClientMetadataError("client_id must be present and be this client's client_id")
    if update.client_secret is not None and (
        current.secret_hash is None or not same(digest(update.client_secret), current.secret_hash)
    ):
        raise InvalidClientMetadataError("client_secret, when sent, must be this client's current secret")
    if is_confidential(update.token_endpoint_auth_method) != is_confidential(current.token_endpoint_auth_method):
        raise InvalidClientMetadataError(
            "token_endpoint_auth_method may not change between none and a client secret method: register a new client"
        )


def registration_response(
    meta: ClientMetadata | Client,
    *,
    client_id: str,
    issued_at: int,
    secret: str | None,
    configuration: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """RFC 7591 §3.2.1: the registered metadata plus `client_id` and `client_id_issued_at`;
    RFC 7592 §3: with the registration access token and the client configuration URI."""
    out: dict[str, Any] = {
        "client_id": client_id,
        "client_id_issued_at": issued_at,
        "redirect_uris": meta.redirect_uris,
        "token_endpoint_auth_method": meta.token_endpoint_auth_method,
        "grant_types": meta.grant_types,
        "response_types": meta.response_types,
        "application_type": meta.application_type,
        "id_token_signed_response_alg": meta.id_token_signed_response_alg,
    }
    if meta.client_name is not None:
        out["client_name"] = meta.client_name
    if meta.scope is not None:
        out["scope"] = meta.scope
    if meta.dpop_bound_access_tokens:
        out["dpop_bound_access_tokens"] = True
    for field in LINK_FIELDS:
        if getattr(meta, field) is not None:
            out[field] = getattr(meta, field)
    if secret is not None:
        out["client_secret"] = secret
    if is_confidential(meta.token_endpoint_auth_method):
        out["client_secret_expires_at"] = 0  # §3.2.1: 0 means it does not expire
    if configuration is not None:
        out["registration_access_token"], out["registration_client_uri"] = configuration
    return out
