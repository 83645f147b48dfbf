"""Credentials in HTTP: the one parser of the `Authorization` header, for the Bearer
scheme (RFC 6750 §2.1), the DPoP scheme (RFC 9449 §7.1) and a client's HTTP Basic
credentials (RFC 6749 §2.3.1, RFC 7617), and the one builder of the
`WWW-Authenticate` challenge (RFC 6750 §3, RFC 9449 §7.1 and §7.2, with RFC 9728 §5.1
`resource_metadata`), for every service that accepts access tokens."""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple
from urllib.parse import unquote_plus

from .dpop import ALGORITHMS, SCHEME
from .errors import (
    InsufficientScopeError,
    InvalidClientError,
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


class BasicCredentials(NamedTuple):
    client_id: str
    secret: str  # "" when the header carried the id alone (a public client's library)


BASIC_CHALLENGE = 'Basic realm="course-school", charset="UTF-8"'


def basic_credentials(header: str | None) -> BasicCredentials | None:
    """A client's `Authorization: Basic` credentials (RFC 6749 §2.3.1): base64 of
    `id:secret`, each form-urlencoded first (so a `:` in the id arrives as `%3A`); None
    without the header. Another scheme, or a value that does not decode, is
    `invalid_client` with the Basic challenge (RFC 6749 §5.2: 401 for the scheme used)."""
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "basic":
        raise basic_refusal("client credentials go in an HTTP Basic Authorization header or in the form body")
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise basic_refusal("the Basic credentials are not base64 of client_id:client_secret") from None
    raw_id, colon, raw_secret = decoded.partition(":")
    client_id, secret = unquote_plus(raw_id), unquote_plus(raw_secret)
    if not colon or not client_id or len(decoded) > MAX_TOKEN:
        raise basic_refusal(
            "the Basic credentials must be client_id:client_secret (form-encoded, RFC 6749 section 2.3.1)"
        )
    return BasicCredentials(client_id, secret)


def basic_refusal(description: str) -> InvalidClientError:
    """`invalid_client` for a client that tried HTTP Basic: 401 with the Basic challenge."""
    err = InvalidClientError(description)
    err.headers["WWW-Authenticate"] = BASIC_CHALLENGE
    return err


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
