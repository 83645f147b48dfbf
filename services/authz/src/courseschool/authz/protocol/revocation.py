"""Token revocation, RFC 7009.

§2.1: the client names a token (and may hint its type); the server looks it up
whatever the hint says. A refresh token ends its whole grant (§2.1: "SHOULD also
invalidate all access tokens based on the same authorization grant"); an access
token is denied from then on. A token issued to another client is left alone.
§2.2: the answer is 200 whether the token was known or not, so the endpoint tells
nothing about tokens that are not the caller's.
"""

from __future__ import annotations

from courseschool.common.errors import InvalidTokenError
from courseschool.common.logging import audit

from .context import TokenContext
from .models import Client
from .token_request import TokenForm, required


async def revoke(form: TokenForm, client: Client, ctx: TokenContext) -> None:
    value = required(form.token, "token")
    if form.token_type_hint == "access_token":
        if not await _revoke_access_token(value, client, ctx):
            await _revoke_refresh_token(value, client, ctx)
        return
    if not await _revoke_refresh_token(value, client, ctx):
        await _revoke_access_token(value, client, ctx)


async def _revoke_refresh_token(value: str, client: Client, ctx: TokenContext) -> bool:
    """True when `value` is a refresh token (revoked or not ours to revoke)."""
    token = await ctx.grants.get_refresh_token(value)
    if token is None:
        return False
    if token.grant.client_id != client.client_id:
        audit("revocation_refused", actor="client", client_id=client.client_id, reason="other_client")
        return True
    if not token.grant.revoked:
        await ctx.revoker.revoke_grant(token.grant.id, reason="revoked_by_client")
    return True


async def _revoke_access_token(value: str, client: Client, ctx: TokenContext) -> bool:
    try:
        claims = ctx.verifier.verify(value)
    except InvalidTokenError:
        return False  # unknown, forged or already expired: nothing to revoke
    if claims.get("client_id") != client.client_id:
        audit("revocation_refused", actor="client", client_id=client.client_id, reason="other_client")
        return True
    await ctx.revoker.revoke_access_token(jti=claims["jti"], grant_id=claims["grant_id"], expires_at=claims["exp"])
    return True
