"""Token introspection, RFC 7662.

§2.1: only confidential clients an administrator made (resource servers) may ask. §2.2: for a token that
is not active the answer is `{"active": false}` and nothing else; this covers
expired, revoked, consumed, unknown and forged tokens, ID tokens, and refresh tokens
of another client. An active access token shows its claims (RFC 8707's binding in
`aud`; a DPoP-bound one its key in `cnf` and `token_type` `DPoP`, RFC 9449 §6.2).
"""

from __future__ import annotations

from typing import Any

from courseschool.common.dpop import SCHEME as DPOP
from courseschool.common.errors import InvalidClientError, InvalidTokenError

from .context import TokenContext
from .models import Client
from .token_request import TokenForm, required

INACTIVE: dict[str, Any] = {"active": False}
_ACCESS_CLAIMS = (
    "scope",
    "client_id",
    "sub",
    "aud",
    "iss",
    "exp",
    "iat",
    "nbf",
    "jti",
    "school_id",
    "grant_id",
    "auth_time",
    "cnf",
)


async def introspect(form: TokenForm, client: Client, ctx: TokenContext) -> dict[str, Any]:
    if client.is_public or not client.is_integration:
        # §2.1 leaves who may ask to the server: resource servers, which an administrator
        # registers; a self-registered client must not learn about other clients' tokens.
        raise InvalidClientError("introspection is for resource servers an administrator registered")
    value = required(form.token, "token")
    try:
        claims = ctx.verifier.verify(value)
    except InvalidTokenError:
        return await _refresh_token(value, client, ctx)
    return await _access_token(claims, ctx)


async def _access_token(claims: dict[str, Any], ctx: TokenContext) -> dict[str, Any]:
    holder = await ctx.grants.access_token_holder(str(claims.get("grant_id", "")), str(claims["jti"]))
    if holder is None or not holder.live:
        return INACTIVE
    out = {"active": True, "token_type": DPOP if "cnf" in claims else "Bearer"}
    out.update({k: claims[k] for k in _ACCESS_CLAIMS if k in claims})
    return out


async def _refresh_token(value: str, client: Client, ctx: TokenContext) -> dict[str, Any]:
    token = await ctx.grants.get_refresh_token(value)
    if token is None or token.grant.revoked or token.consumed_at is not None:
        return INACTIVE
    if token.grant.client_id != client.client_id:
        return INACTIVE
    now = ctx.clock.now()
    expires = min(token.created_at + ctx.refresh_idle_ttl, token.grant.created_at + ctx.refresh_absolute_ttl)
    if expires <= now:
        return INACTIVE
    return {
        "active": True,
        "token_type": "refresh_token",
        "scope": token.scope,
        "client_id": token.grant.client_id,
        "sub": token.grant.user_id,
        "aud": token.resource,
        "iss": ctx.policy.issuer,
        "exp": expires,
        "iat": token.created_at,
    }
