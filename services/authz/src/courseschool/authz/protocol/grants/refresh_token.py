"""The refresh token grant: RFC 6749 §6, with rotation and reuse detection as
RFC 9700 §4.14.2 and OAuth 2.1 §4.3.1 ask.

Linear steps: load the token, check client, grant, lifetimes, the DPoP key the grant
is bound to (RFC 9449 §5), scope (narrowing only, §6, then capped by the user's current
role) and resource (RFC 8707 §2.2), all before anything changes; then bind a public
client's unbound grant to the key of its proof, and rotate atomically. A token
presented again is a reuse: inside the grace window, while the token it was rotated
into is still unused, the same client gets the first answer back (a lost response,
retried); otherwise the whole grant is revoked.

Most refusals tell the client the same words (`INVALID`: which check failed is no
business of whoever holds a stolen token); each carries its cause as `detail`, which only
the log sees.
"""

from __future__ import annotations

from courseschool.common.errors import InvalidGrantError, InvalidScopeError
from courseschool.common.logging import audit, get_logger
from courseschool.common.scopes import format_scope, parse_scope, requested_scope
from courseschool.common.secrets import new_token

from .. import retry_response
from ..consent import capped_scope
from ..context import TokenContext
from ..models import Client, RefreshToken, TokenResponse, User
from ..ports import Rotation
from ..school_blocks import refuse_if_blocked
from ..token_request import TokenForm, required, resource_within_grant
from ..tokens import mint, refresh_binding
from .school_policy_check import within_school_policy

log = get_logger(__name__)

GRANT_TYPE = "refresh_token"
INVALID = "the refresh token is invalid, expired or revoked"


async def refresh(form: TokenForm, client: Client, ctx: TokenContext, jkt: str | None = None) -> TokenResponse:
    """Refresh token -> new access token and a rotated refresh token. RFC 6749 §6; `jkt`
    is the key of the request's DPoP proof (RFC 9449 §5)."""
    value = required(form.refresh_token, "refresh_token")
    token = await _load(value, ctx)
    now = ctx.clock.now()
    _check_client(token, client)
    _check_lifetimes(token, now, ctx)
    _check_dpop_key(token, jkt)
    scope = _narrowed_scope(form.scope, token.scope)
    resource = resource_within_grant(form.resource, token.resource)
    user = _active_user(token)
    scope = capped_scope(scope, user=user, client=client)
    await refuse_if_blocked(token.grant, client, ctx)
    scope = await within_school_policy(token.grant, client, scope, ctx)
    if token.consumed_at is not None:
        return await _replay_or_revoke(value, token, now, ctx)
    await _bind_to_proof_key(token, client, jkt, ctx)
    new_refresh = new_token()
    response = mint(
        ctx.policy,
        ctx.signer,
        client=client,
        grant=token.grant,
        user=user,
        scope=scope,
        resource=resource,
        nonce=None,
        refresh_token=new_refresh,
        now=now,
        jkt=jkt,
    )
    outcome = await ctx.grants.rotate_refresh_token(
        old=value, new=new_refresh, grant_id=token.grant.id, replay=retry_response.seal(value, response), now=now
    )
    if outcome is Rotation.GRANT_REVOKED:
        raise InvalidGrantError(INVALID, detail=f"grant {token.grant.id} was revoked during the rotation")
    if outcome is Rotation.ALREADY_USED:  # a concurrent request rotated it first
        return await _replay_or_revoke(value, await _load(value, ctx), now, ctx)
    log.info("token_issued", grant_type=GRANT_TYPE, client_id=client.client_id, grant_id=token.grant.id)
    return response


async def _load(value: str, ctx: TokenContext) -> RefreshToken:
    token = await ctx.grants.get_refresh_token(value)
    if token is None:
        raise InvalidGrantError(INVALID, detail="no refresh token has this value")
    if token.grant.revoked:
        raise InvalidGrantError(INVALID, detail=f"grant {token.grant.id} is revoked")
    return token


def _check_client(token: RefreshToken, client: Client) -> None:
    # §6: the refresh token must have been issued to the authenticated client.
    if token.grant.client_id != client.client_id:
        raise InvalidGrantError(
            INVALID, detail=f"grant {token.grant.id} is client {token.grant.client_id}'s, not {client.client_id}'s"
        )


def _check_lifetimes(token: RefreshToken, now: int, ctx: TokenContext) -> None:
    idle, age = now - token.created_at, now - token.grant.created_at
    if idle > ctx.refresh_idle_ttl:
        raise InvalidGrantError(
            "the refresh token has expired", detail=f"idle {idle} s, past the idle lifetime of {ctx.refresh_idle_ttl} s"
        )
    if age > ctx.refresh_absolute_ttl:
        raise InvalidGrantError(
            "the refresh token has expired",
            detail=f"grant {token.grant.id} is {age} s old, past the absolute lifetime of {ctx.refresh_absolute_ttl} s",
        )


def _check_dpop_key(token: RefreshToken, jkt: str | None) -> None:
    # RFC 9449 §5: a bound refresh token is used only with a proof made with its key.
    if token.grant.dpop_jkt is not None and jkt != token.grant.dpop_jkt:
        raise InvalidGrantError(
            "the refresh token is bound to a DPoP key: send a proof made with that key",
            detail=f"grant {token.grant.id} is bound to {token.grant.dpop_jkt}; the proof's key: {jkt or 'no proof'}",
        )


async def _bind_to_proof_key(token: RefreshToken, client: Client, jkt: str | None, ctx: TokenContext) -> None:
    """RFC 9449 §5: the first proof a public client sends binds its refresh tokens from
    then on; of two first proofs at once, the one bound first wins."""
    binding = refresh_binding(client, jkt)
    if binding is None or token.grant.dpop_jkt is not None:
        return
    if await ctx.grants.bind_dpop_key(token.grant.id, binding) != binding:
        raise InvalidGrantError(
            "the refresh token is bound to a DPoP key: send a proof made with that key",
            detail=f"grant {token.grant.id} was bound to another key by a concurrent first proof",
        )


def _narrowed_scope(requested: str | None, granted: str) -> str:
    """§6: the requested scope must not include any scope not originally granted. A scope
    this server ignores (`offline_access`, §3.3) is dropped first; naming only such
    scopes asks for the grant's scope."""
    if requested is None:
        return granted
    names = requested_scope(requested)
    if not names and parse_scope(requested):
        return granted
    extra = [n for n in names if n not in parse_scope(granted)]
    if not names or extra:
        raise InvalidScopeError(
            "a refresh may narrow the scope, never widen it",
            detail=f"asked for {' '.join(extra)} beyond the grant" if extra else "asked for an empty scope",
        )
    return format_scope(names)


def _active_user(token: RefreshToken) -> User:
    if token.user.disabled:
        raise InvalidGrantError(INVALID, detail=f"user {token.user.id} is disabled")
    return token.user


async def _replay_or_revoke(value: str, token: RefreshToken, now: int, ctx: TokenContext) -> TokenResponse:
    within_grace = token.consumed_at is not None and now - token.consumed_at <= ctx.refresh_grace
    if within_grace and token.successor_live and token.replay is not None and not token.grant.revoked:
        log.info("refresh_retried", client_id=token.grant.client_id, grant_id=token.grant.id)
        return retry_response.open_sealed(value, token.replay)
    await ctx.revoker.revoke_grant(token.grant.id, reason="refresh_reused", ip=ctx.ip)
    audit(
        "refresh_reused",
        actor="client",
        subject=token.grant.user_id,
        client_id=token.grant.client_id,
        grant_id=token.grant.id,
        ip=ctx.ip,
    )
    raise InvalidGrantError(INVALID, detail=f"reused {_reuse(token, now, ctx)}: grant {token.grant.id} revoked")


def _reuse(token: RefreshToken, now: int, ctx: TokenContext) -> str:
    """Why a second use of a rotated token was no retry (the refusal's log detail)."""
    since = now - (token.consumed_at or now)
    if since > ctx.refresh_grace:
        return f"{since} s after its rotation, past the {ctx.refresh_grace} s retry window"
    if not token.successor_live:
        return "after the token it was rotated into was used"
    return "with no answer kept for a retry"
