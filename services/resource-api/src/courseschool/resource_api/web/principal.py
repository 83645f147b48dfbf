"""Who calls, as a dependency: the one entry point for bearer tokens at the resource
API. A route declares the scope it needs and whether anonymous callers may use it
(its `opt`); the handler receives a verified `Principal` that passed that guard, and
neither handlers nor the service ever read an `Authorization` header.

RFC 6750: no token is anonymous (§2.1 header only; a token in the query is ignored);
a bad token is 401 `invalid_token`, a good one without the scope 403
`insufficient_scope` naming it, both with the challenge (§3) pointing to the RFC 9728
metadata. An anonymous call to a route that is not public is 403 without a challenge.
RFC 9449 §7: a DPoP-bound token comes as `Authorization: DPoP` with a proof; a refused
proof is 401 `invalid_dpop_proof` (or `use_dpop_nonce`) in the DPoP challenge.
"""

from __future__ import annotations

import inspect
from typing import Any

from litestar import Litestar, Request
from litestar.handlers import BaseRouteHandler
from litestar.routes import HTTPRoute

from courseschool.common.bearer import BEARER, challenged, presented_token
from courseschool.common.errors import (
    AccessDeniedError,
    InsufficientScopeError,
    InvalidDpopProofError,
    InvalidTokenError,
    UseDpopNonceError,
)
from courseschool.common.web import proof_target

from ..auth.verifier import ANONYMOUS, Principal
from ..settings import ResourceSettings

ANONYMOUS_REFUSED = "this resource needs an access token; see /.well-known/oauth-protected-resource"


def guard(*scopes: str, public: bool = False) -> dict[str, Any]:
    """A route's `opt`: every scope it needs, and whether anonymous callers may use it. A
    route that takes the `principal` must declare at least one (`require_declared_scopes`);
    a route that does not take it reads no token."""
    return {"scopes": scopes, "public": public}


class UndeclaredScopeError(RuntimeError):
    """A route takes the caller but says nothing of the scope it needs."""


def takes_principal(handler: BaseRouteHandler) -> bool:
    """Whether the handler is given the caller (the `principal` dependency)."""
    return "principal" in inspect.signature(handler.fn).parameters


def declared_scopes(handler: BaseRouteHandler) -> tuple[str, ...]:
    return tuple(handler.opt.get("scopes", ()))


def require_declared_scopes(app: Litestar) -> None:
    """Fail closed, at start-up: every route whose handler takes the `principal` declares
    the scope it needs (`opt=guard(...)`), or the app is refused with the routes named. A
    route that forgot would otherwise serve any valid token, whatever its scopes."""
    undeclared = [
        f"{'/'.join(sorted(handler.http_methods))} {route.path} ({handler.name})"
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        if takes_principal(handler) and not declared_scopes(handler)
    ]
    if undeclared:
        raise UndeclaredScopeError(
            "routes take the principal without declaring the scope they need (opt=guard(...)): " + ", ".join(undeclared)
        )


async def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    """The caller, verified (`auth/verifier.py`) and checked against the route's `opt`."""
    resource_api = request.app.state.resource_api  # the app's Components
    scheme = BEARER
    try:
        credentials = presented_token(request.headers.get("authorization"))
        if credentials is None:
            principal = ANONYMOUS
        else:
            scheme = credentials.scheme
            target = proof_target(request.scope, resource_api.settings.base_url)
            principal = await resource_api.verifier.verify(credentials, target)
    except (InvalidTokenError, InvalidDpopProofError, UseDpopNonceError) as err:
        raise challenged(err, _metadata_url(resource_api.settings), scheme=scheme) from None
    needed = declared_scopes(request.route_handler)  # never none: require_declared_scopes
    if principal.anonymous:
        if request.route_handler.opt.get("public"):
            return principal
        raise AccessDeniedError(ANONYMOUS_REFUSED)
    if not set(needed) <= principal.scopes:
        raise challenged(_insufficient(needed), _metadata_url(resource_api.settings), scheme=scheme)
    return principal


def _metadata_url(settings: ResourceSettings) -> str:
    """Where the challenge points (RFC 9728 §5.1): this API's protected resource metadata."""
    return f"{settings.base_url}/.well-known/oauth-protected-resource"


def _insufficient(needed: tuple[str, ...]) -> InsufficientScopeError:
    """RFC 6750 §3.1: `scope` names every scope the operation needs (not only the missing
    ones), so a client asking again (the MCP step-up flow) can ask for exactly that,
    together with what it holds."""
    scope = " ".join(needed)
    words = f"the {scope} scope" if len(needed) == 1 else f"the scopes {scope}"
    return InsufficientScopeError(f"this operation needs {words}", scope=scope)
