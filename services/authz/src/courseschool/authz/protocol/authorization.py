"""The authorization request, RFC 6749 §4.1.1, with PKCE (RFC 7636 §4.3), resource
indicators (RFC 8707 §2) and the OpenID Connect parameters (OIDC Core §3.1.2.1).

Validation happens in two phases (RFC 6749 §4.1.2.1): until the client and its
redirect URI are known good, an error must not redirect anywhere
(`UnsafeRequestError`, shown to the user as a page); after that, errors go back to
the client's redirect URI (`AuthorizationError`, carrying `state`).

Every value kept while the person signs in is bounded (the parameters as a whole,
and `state`, `nonce`, `scope` and `login_hint` each), so an anonymous request can
only ever hold a few kilobytes of the server's memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from courseschool.common.dpop import is_thumbprint
from courseschool.common.errors import (
    InvalidRequestError,
    InvalidScopeError,
    InvalidTargetError,
    OAuthError,
    RedirectError,
    RequestNotSupportedError,
    RequestUriNotSupportedError,
    UnsupportedResponseTypeError,
    fit_description,
)
from courseschool.common.resource import canonical_resource
from courseschool.common.scopes import DEFAULT_SCOPE, parse_scope, requested_scope, unknown_scopes

from . import pkce
from .models import Client
from .ports import ClientStore
from .redirect_uris import find_redirect_uri
from .redirects import error_redirect_url

PROMPTS = frozenset({"none", "login", "consent", "select_account"})
MAX_STATE = 2048
MAX_NONCE = 512
MAX_SCOPE = 4096
MAX_CLIENT_ID = 512
MAX_LOGIN_HINT = 320  # an email address at most (RFC 5321 §4.5.3.1)
MAX_PARAMETERS = 8192  # every name and value of the request together, in characters

Params = Mapping[str, Sequence[str]]


class UnsafeRequestError(InvalidRequestError):
    """The client or redirect URI cannot be trusted: never redirect, show a page."""


class AuthorizationError(RedirectError):
    """An error to send back to the (validated) redirect URI."""

    def __init__(self, error: OAuthError, redirect_uri: str, state: str | None) -> None:
        super().__init__(error)
        self.redirect_uri = redirect_uri
        self.state = state

    def location(self, issuer: str) -> str:
        return error_redirect_url(self.error, self.redirect_uri, self.state, issuer)


class AuthorizationRequest(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    redirect_uri: str
    scope: list[str]
    state: str | None
    nonce: str | None
    code_challenge: str
    resource: str
    prompt: frozenset[str]
    max_age: int | None = None
    login_hint: str | None = None
    # Not OAuth: the client asks for a page of ours that says what was decided before the
    # browser goes back to it (for apps whose listener may be gone by then).
    decision_page: bool = False
    dpop_jkt: str | None = None  # RFC 9449 §10: the code is bound to this DPoP key


def single(params: Params, name: str, *, unsafe: bool = False) -> str | None:
    """RFC 6749 §3.1: parameters must not be repeated."""
    values = params.get(name) or []
    if len(values) > 1:
        if unsafe:
            raise UnsafeRequestError(f"the {name} parameter is repeated")
        raise InvalidRequestError(f"the {name} parameter is repeated")
    return values[0] if values else None


async def validate_authorization_request(
    params: Params, clients: ClientStore, *, known_resources: frozenset[str], default_resource: str
) -> tuple[Client, AuthorizationRequest]:
    client, redirect_uri = await _trusted_client_and_redirect(params, clients)
    state_values = params.get("state") or []
    # §4.1.2.1 echoes state exactly, but never one longer than a whole request may be.
    state = state_values[0] if len(state_values) == 1 and len(state_values[0]) <= MAX_PARAMETERS else None
    try:
        request = _validate_rest(params, client, redirect_uri, known_resources, default_resource)
    except OAuthError as err:
        raise AuthorizationError(err, redirect_uri, state) from None
    return client, request


async def _trusted_client_and_redirect(params: Params, clients: ClientStore) -> tuple[Client, str]:
    client_id = single(params, "client_id", unsafe=True)
    if not client_id or len(client_id) > MAX_CLIENT_ID:
        raise UnsafeRequestError("the request has no valid client_id")
    client = await clients.get(client_id)
    if client is None or client.disabled:
        raise UnsafeRequestError(
            "the client is unknown or disabled",
            advice="This app is not registered with Course School, or it was removed. Restart the app so that it "
            "registers again; if that does not help, its developer needs to fix it.",
        )
    redirect_uri = single(params, "redirect_uri", unsafe=True)
    if not redirect_uri:
        raise UnsafeRequestError("the request has no redirect_uri")
    if not find_redirect_uri(redirect_uri, client.redirect_uris):
        raise UnsafeRequestError("the redirect_uri is not registered for this client")
    return client, redirect_uri


def _validate_rest(
    params: Params, client: Client, redirect_uri: str, known_resources: frozenset[str], default_resource: str
) -> AuthorizationRequest:
    if sum(len(name) + sum(len(v) for v in values) for name, values in params.items()) > MAX_PARAMETERS:
        raise InvalidRequestError(f"the request's parameters must be at most {MAX_PARAMETERS} characters together")
    for name, values in params.items():
        if len(values) > 1 and name != "resource":
            raise InvalidRequestError(f"the {fit_description(name)} parameter is repeated")  # the caller's name
    if single(params, "request") is not None:
        raise RequestNotSupportedError("request objects are not supported")
    if single(params, "request_uri") is not None:
        raise RequestUriNotSupportedError("request_uri is not supported")
    response_type = single(params, "response_type")
    if not response_type:
        raise InvalidRequestError("response_type is required")
    if response_type != "code":
        raise UnsupportedResponseTypeError("only response_type=code is supported")
    response_mode = single(params, "response_mode")
    if response_mode not in (None, "query"):
        raise InvalidRequestError("only response_mode=query is supported")
    state = single(params, "state")
    if state is not None and len(state) > MAX_STATE:
        raise InvalidRequestError(f"state must be at most {MAX_STATE} characters")
    scope = _scope(single(params, "scope"), client)
    challenge = pkce.check_challenge(single(params, "code_challenge"), single(params, "code_challenge_method"))
    resource = _resource(params.get("resource") or [], known_resources, default_resource)
    nonce = single(params, "nonce")
    if nonce is not None and not (0 < len(nonce) <= MAX_NONCE):
        raise InvalidRequestError(f"nonce must be 1 to {MAX_NONCE} characters")
    login_hint = single(params, "login_hint") or None
    if login_hint is not None and len(login_hint) > MAX_LOGIN_HINT:
        raise InvalidRequestError(f"login_hint must be at most {MAX_LOGIN_HINT} characters")
    return AuthorizationRequest(
        client_id=client.client_id,
        redirect_uri=redirect_uri,
        scope=scope,
        state=state,
        nonce=nonce,
        code_challenge=challenge,
        resource=resource,
        prompt=_prompt(single(params, "prompt")),
        max_age=_max_age(single(params, "max_age")),
        login_hint=login_hint,
        decision_page=_flag(single(params, "decision_page"), "decision_page"),
        dpop_jkt=_dpop_jkt(single(params, "dpop_jkt")),
    )


def _scope(value: str | None, client: Client) -> list[str]:
    """RFC 6749 §3.3: without `scope` the request asks for a default: the client's registered
    `scope`, else `DEFAULT_SCOPE`; either is capped by the user's role like any request.
    Scopes the server ignores (`offline_access`) are dropped before anything else, so a
    request naming only them asks for the default too; an unknown one is refused."""
    if value is not None and len(value) > MAX_SCOPE:
        raise InvalidRequestError("scope is too long")
    names = requested_scope(value or "")
    if not names:
        return parse_scope(client.scope) if client.scope else list(DEFAULT_SCOPE)
    unknown = unknown_scopes(names)
    if unknown:
        raise InvalidScopeError(f"unknown scope: {fit_description(' '.join(unknown[:5]))}")
    return names


def _resource(values: Sequence[str], known: frozenset[str], default: str) -> str:
    """RFC 8707 §2: absolute URI, no fragment; one known resource server here."""
    if not values:
        return default
    canon = {canonical_resource(v) for v in values}
    if None in canon:
        raise InvalidTargetError("resource must be an absolute URI without fragment")
    if len(canon) > 1:
        raise InvalidTargetError("one resource per request")
    (resource,) = canon
    if resource not in known:
        raise InvalidTargetError("the resource is unknown to this server")
    return resource


def _flag(value: str | None, name: str) -> bool:
    if value in (None, "false"):
        return False
    if value == "true":
        return True
    raise InvalidRequestError(f"{name} must be true or false")


def _dpop_jkt(value: str | None) -> str | None:
    if value is not None and not is_thumbprint(value):
        raise InvalidRequestError("dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key (RFC 7638)")
    return value


def _prompt(value: str | None) -> frozenset[str]:
    if value is None:
        return frozenset()
    prompts = frozenset(value.split())
    if not prompts or not prompts <= PROMPTS:
        raise InvalidRequestError("prompt may hold none, login, consent or select_account")
    if "none" in prompts and len(prompts) > 1:
        raise InvalidRequestError("prompt=none cannot be combined with other values")
    return prompts


def _max_age(value: str | None) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        raise InvalidRequestError("max_age must be a non-negative integer")
    return int(value)
