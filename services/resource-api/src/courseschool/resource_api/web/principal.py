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

from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency

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
from ..service import ResourceService

ANONYMOUS_REFUSED = "this resource needs an access token; see /.well-known/oauth-protected-resource"


def guard(*scopes: str, public: bool = False) -> dict[str, Any]:
    """A route's `opt`: every scope it needs (none: no token is read), and whether
    anonymous callers may use it."""
    return {"scopes": scopes, "public": public}


def provide_resources(state: State) -> ResourceService:
    return state.resources


async def provide_principal(request: Request[Any, Any, Any], resources: NamedDependency[ResourceService]) -> Principal:
    scheme = BEARER
    try:
        credentials = presented_token(request.headers.get("authorization"))
        if credentials is None:
            principal = ANONYMOUS
        else:
            scheme = credentials.scheme
            target = proof_target(request, resources.settings.base_url)
            principal = await resources.verifier.verify(credentials, target)
    except (InvalidTokenError, InvalidDpopProofError, UseDpopNonceError) as err:
        raise challenged(err, resources.metadata_url, scheme=scheme) from None
    needed: tuple[str, ...] = request.route_handler.opt.get("scopes", ())
    if not needed:
        return principal
    if principal.anonymous:
        if request.route_handler.opt.get("public"):
            return principal
        raise AccessDeniedError(ANONYMOUS_REFUSED)
    if not set(needed) <= principal.scopes:
        raise challenged(_insufficient(needed), resources.metadata_url, scheme=scheme)
    return principal


def _insufficient(needed: tuple[str, ...]) -> InsufficientScopeError:
    """RFC 6750 §3.1: `scope` names every scope the operation needs (not only the missing
    ones), so a client asking again (the MCP step-up flow) can ask for exactly that,
    together with what it holds."""
    scope = " ".join(needed)
    words = f"the {scope} scope" if len(needed) == 1 else f"the scopes {scope}"
    return InsufficientScopeError(f"this operation needs {words}", scope=scope)
