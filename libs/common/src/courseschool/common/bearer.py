"""Access tokens in HTTP: the one parser of the `Authorization` header, for the Bearer
scheme (RFC 6750 §2.1) and the DPoP scheme (RFC 9449 §7.1), and the one builder of the
`WWW-Authenticate` challenge (RFC 6750 §3, RFC 9449 §7.1 and §7.2, with RFC 9728 §5.1
`resource_metadata`), for every service that accepts access tokens."""

from __future__ import annotations

from typing import NamedTuple

from .dpop import ALGORITHMS, SCHEME
from .errors import (
    InsufficientScopeError,
    InvalidDpopProofError,
    InvalidTokenError,
    OAuthError,
    UseDpopNonceError,
)

MAX_TOKEN = 8192
BEARER = "Bearer"
DPOP = SCHEME
MALFORMED = "the Authorization header must be 'Bearer <access token>' or 'DPoP <access token>'"
_SCHEMES = {"bearer": BEARER, "dpop": DPOP}


class Credentials(NamedTuple):
    scheme: str  # BEARER or DPOP
    token: str


def presented_token(header: str | None) -> Credentials | None:
    """The scheme and token of an `Authorization: Bearer <token>` or `DPoP <token>` header
    (schemes are case-insensitive); None when there is no header (a token in the query
    string is never read, RFC 6750 §2.3). Anything else is `invalid_token`."""
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    token = value.strip()
    named = _SCHEMES.get(scheme.lower())
    if named is None or not token or " " in token or len(token) > MAX_TOKEN:
        raise InvalidTokenError(MALFORMED)
    return Credentials(named, token)


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header only, for credentials that
    are never sender-constrained; None when there is no header."""
    credentials = presented_token(header)
    if credentials is not None and credentials.scheme != BEARER:
        raise InvalidTokenError("the Authorization header must be 'Bearer <token>'")
    return credentials.token if credentials else None


def challenge(err: OAuthError | None, resource_metadata: str, *, scheme: str = BEARER) -> str:
    """The `WWW-Authenticate` value: the Bearer challenge and the DPoP one with the
    algorithms proofs may use (RFC 9449 §7.2: a resource that takes both offers both);
    the error, its description and, for `insufficient_scope`, the scope needed go in the
    challenge of the scheme the request used; both name `resource_metadata`."""
    bearer: list[tuple[str, str]] = []
    dpop: list[tuple[str, str]] = []
    if err is not None:
        said = dpop if scheme == DPOP else bearer
        said.append(("error", err.error))
        if err.description:
            said.append(("error_description", err.description))
        if isinstance(err, InsufficientScopeError):
            said.append(("scope", err.scope))
    bearer.append(("resource_metadata", resource_metadata))
    dpop += [("algs", " ".join(ALGORITHMS)), ("resource_metadata", resource_metadata)]
    return f"{BEARER} {_params(bearer)}, {DPOP} {_params(dpop)}"


def challenged(err: OAuthError, resource_metadata: str, *, scheme: str = BEARER) -> OAuthError:
    """The error with its challenge header set (401 and 403 of a protected resource); a
    DPoP proof refused at a protected resource is a 401 (RFC 9449 §7.1, §9)."""
    if isinstance(err, InvalidDpopProofError | UseDpopNonceError):
        err.status_code = 401
    err.headers["WWW-Authenticate"] = challenge(err, resource_metadata, scheme=scheme)
    return err


def _params(params: list[tuple[str, str]]) -> str:
    return ", ".join(f'{k}="{_quote(v)}"' for k, v in params)


def _quote(value: str) -> str:
    # RFC 9110 §5.6.4 quoted-string: escape backslash and double quote, drop controls.
    cleaned = "".join(ch for ch in value if ch >= " " and ch != "\x7f")
    return cleaned.replace("\\", "\\\\").replace('"', '\\"')
