"""The authorization code grant: RFC 6749 §4.1.3 (request) and §4.1.4 (response),
with PKCE verification (RFC 7636 §4.6) and resource indicators (RFC 8707 §2.2).

Linear steps: load the code, refuse a reused one (revoking what its first use
issued, §4.1.2), check client, expiry, redirect URI, PKCE and resource, then consume
the code atomically together with the first refresh token, and mint the tokens.
Nothing is consumed before every check has passed.
"""

from __future__ import annotations

from courseschool.common.errors import InvalidGrantError
from courseschool.common.logging import audit, get_logger
from courseschool.common.secrets import new_token

from .. import pkce
from ..context import TokenContext
from ..models import AuthorizationCode, Client, TokenResponse
from ..token_request import TokenForm, required, resource_within_grant
from ..tokens import mint

log = get_logger(__name__)

GRANT_TYPE = "authorization_code"


async def exchange_code(form: TokenForm, client: Client, ctx: TokenContext) -> TokenResponse:
    """Authorization code -> tokens. RFC 6749 §4.1.3; PKCE RFC 7636 §4.6."""
    code_value = required(form.code, "code")
    redirect_uri = required(form.redirect_uri, "redirect_uri")
    code = await _load_unused_code(code_value, ctx)
    now = ctx.clock.now()
    _check_client(code, client)
    _check_expiry(code, now)
    _check_redirect_uri(code, redirect_uri)
    pkce.verify(form.code_verifier, code.code_challenge)
    resource = resource_within_grant(form.resource, code.resource)
    grant = await ctx.grants.get(code.grant_id)
    user = await ctx.users.get(code.user_id)
    if grant is None or grant.revoked or user is None or user.disabled:
        raise InvalidGrantError("the authorization grant is no longer valid")
    refresh_token = new_token() if "refresh_token" in client.grant_types else None
    consumed = await ctx.grants.redeem_code(
        code=code_value, refresh_token=refresh_token, scope=code.scope, resource=code.resource, now=now
    )
    if not consumed:  # lost a race with another redemption of the same code
        await _revoke_after_reuse(code, ctx)
    log.info("token_issued", grant_type=GRANT_TYPE, client_id=client.client_id, grant_id=grant.id)
    return mint(
        ctx.policy, ctx.signer, client=client, grant=grant, user=user, scope=code.scope,
        resource=resource, nonce=code.nonce, refresh_token=refresh_token, now=now,
    )


async def _load_unused_code(value: str, ctx: TokenContext) -> AuthorizationCode:
    code = await ctx.codes.get(value)
    if code is None:
        raise InvalidGrantError("the authorization code is invalid, expired or already used")
    if code.consumed:
        await _revoke_after_reuse(code, ctx)
    return code


async def _revoke_after_reuse(code: AuthorizationCode, ctx: TokenContext) -> None:
    """§4.1.2: a code used twice is refused and what its first use issued is revoked."""
    await ctx.revoker.revoke_grant(code.grant_id, reason="code_reused")
    audit("code_reused", actor="client", subject=code.user_id, client_id=code.client_id, grant_id=code.grant_id)
    raise InvalidGrantError("the authorization code is invalid, expired or already used")


def _check_client(code: AuthorizationCode, client: Client) -> None:
    if code.client_id != client.client_id:
        raise InvalidGrantError("the authorization code was issued to another client")


def _check_expiry(code: AuthorizationCode, now: int) -> None:
    if code.expires_at <= now:
        raise InvalidGrantError("the authorization code has expired")


def _check_redirect_uri(code: AuthorizationCode, redirect_uri: str) -> None:
    # §4.1.3: identical to the value in the authorization request.
    if redirect_uri != code.redirect_uri:
        raise InvalidGrantError("redirect_uri differs from the one in the authorization request")
