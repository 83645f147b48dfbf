"""GET or POST /api/oauth/userinfo: OIDC Core §5.3, a protected resource (RFC 6750;
RFC 9449 §7 for DPoP-bound tokens)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, route

from courseschool.common.bearer import BEARER, challenge, challenged, presented_token
from courseschool.common.errors import (
    InsufficientScopeError,
    InvalidDpopProofError,
    InvalidTokenError,
    UseDpopNonceError,
)
from courseschool.common.web import proof_target

from ..endpoints.userinfo import userinfo_claims
from .http import TokensDep, no_store_json


@route("/api/oauth/userinfo", http_method=["GET", "POST"], status_code=200)
async def userinfo(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
    metadata_url = f"{tokens.settings.base_url}/.well-known/oauth-protected-resource"
    scheme = BEARER
    try:
        credentials = presented_token(request.headers.get("authorization"))
        if credentials is not None:
            scheme = credentials.scheme
            return no_store_json(
                await userinfo_claims(tokens, credentials, proof_target(request.scope, tokens.settings.base_url))
            )
    except (InvalidTokenError, InsufficientScopeError, InvalidDpopProofError, UseDpopNonceError) as err:
        raise challenged(err, metadata_url, scheme=scheme) from None
    # RFC 6750 §3.1: a request without authentication gets a challenge with no error code.
    missing = InvalidTokenError("an access token is required")
    missing.headers["WWW-Authenticate"] = challenge(None, metadata_url)
    raise missing
