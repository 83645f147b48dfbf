"""UserInfo, OIDC Core §5.3: a live access token of ours with the `openid` scope
gets the claims its scopes allow. UserInfo is a protected resource: a DPoP-bound token
comes with the DPoP scheme and a proof by its key (RFC 9449 §7)."""

from __future__ import annotations

from typing import Any

from courseschool.common.bearer import Credentials
from courseschool.common.dpop import ProofTarget, check_sender, confirmation_jkt
from courseschool.common.errors import InsufficientScopeError, InvalidTokenError

from ..families import Tokens
from ..protocol.userinfo import released_claims


async def userinfo_claims(c: Tokens, credentials: Credentials, target: ProofTarget) -> dict[str, Any]:
    claims = c.keys.ring.verify(credentials.token)
    await check_sender(
        c.dpop, scheme=credentials.scheme, token=credentials.token, jkt=confirmation_jkt(claims), target=target
    )
    holder = await c.grants.access_token_holder(str(claims.get("grant_id", "")), str(claims["jti"]))
    if holder is None or holder.grant.revoked or holder.token_revoked:
        raise InvalidTokenError("the access token has been revoked")
    scopes = set(str(claims.get("scope", "")).split())
    if "openid" not in scopes:
        raise InsufficientScopeError("the access token was not granted the openid scope", scope="openid")
    if holder.user.disabled or holder.user.id != claims["sub"]:
        raise InvalidTokenError("the user of this access token is no longer active")
    return released_claims(holder.user, scopes)
