"""The authorization code grant: RFC 6749 §4.1.3 (request) and §4.1.4 (response),
with PKCE verification (RFC 7636 §4.6) and resource indicators (RFC 8707 §2.2).

Linear steps: load the code, refuse a reused one (revoking what its first use
issued, §4.1.2), check client, expiry, redirect URI, PKCE, the DPoP key the code is
bound to (`dpop_jkt`, RFC 9449 §10) and resource, then consume
the code atomically together with the first refresh token, and mint the tokens.
Nothing is consumed before every check has passed.

One grant per sign-in: each exchange starts its own lineage, and the user's other
grants of the same client stay (a client id may be shared by every install: metadata
documents, integrations, ids shipped in binaries). The same statement that consumes the
code ends the one grant bound to the same DPoP key, if any (RFC 9449 §5: provably the
same install, `replaced`), and the least recently used past GRANTS_PER_APP
(`superseded`); they are announced here.

Every refusal carries its cause as `detail`, for the log only: an unknown, a used and a
raced code read alike to the client (`UNUSABLE`).
"""

from __future__ import annotations

from courseschool.common.errors import InvalidGrantError
from courseschool.common.logging import audit, get_logger
from courseschool.common.secrets import new_token

from .. import pkce
from ..consent import capped_scope
from ..context import TokenContext
from ..models import AuthorizationCode, Client, EndedGrant, Grant, TokenResponse, User
from ..school_blocks import refuse_if_blocked
from ..token_request import TokenForm, required, resource_within_grant
from ..tokens import mint, refresh_binding
from .school_policy_check import within_school_policy

log = get_logger(__name__)

GRANT_TYPE = "authorization_code"
UNUSABLE = "the authorization code is invalid, expired or already used"


async def exchange_code(form: TokenForm, client: Client, ctx: TokenContext, jkt: str | None = None) -> TokenResponse:
    """Authorization code -> tokens. RFC 6749 §4.1.3; PKCE RFC 7636 §4.6; `jkt` is the
    key of the request's DPoP proof (RFC 9449 §5)."""
    code_value = required(form.code, "code")
    redirect_uri = required(form.redirect_uri, "redirect_uri")
    code = await _load_unused_code(code_value, ctx)
    now = ctx.clock.now()
    _check_client(code, client)
    _check_expiry(code, now)
    _check_redirect_uri(code, redirect_uri)
    pkce.verify(form.code_verifier, code.code_challenge)
    _check_dpop_key(code, jkt)
    grant, user = code.grant, code.user
    resource = resource_within_grant(form.resource, grant.resource)
    _check_still_valid(grant, user)
    await refuse_if_blocked(grant, client, ctx)
    scope = capped_scope(grant.scope, user=user, client=client)
    scope = await within_school_policy(grant, client, scope, ctx)
    refresh_token = new_token() if "refresh_token" in client.grant_types else None
    binding = refresh_binding(client, jkt) if refresh_token is not None else None
    ended = await ctx.grants.redeem_code(
        code=code_value,
        refresh_token=refresh_token,
        scope=scope,
        resource=grant.resource,
        now=now,
        grants_per_app=ctx.grants_per_app,
        dpop_jkt=binding,
    )
    if ended is None:  # lost a race with another redemption of the same code
        await _revoke_after_reuse(code, ctx, "another request redeemed the code first")
    await _announce_ended(ended or [], grant, ctx)
    log.info("token_issued", grant_type=GRANT_TYPE, client_id=client.client_id, grant_id=grant.id)
    return mint(
        ctx.policy,
        ctx.signer,
        client=client,
        grant=grant,
        user=user,
        scope=scope,
        resource=resource,
        nonce=code.nonce,
        refresh_token=refresh_token,
        now=now,
        jkt=jkt,
    )


async def _load_unused_code(value: str, ctx: TokenContext) -> AuthorizationCode:
    code = await ctx.codes.get(value)
    if code is None:
        raise InvalidGrantError(UNUSABLE, detail="no authorization code has this value")
    if code.consumed:
        await _revoke_after_reuse(code, ctx, "the code was redeemed before")
    return code


async def _revoke_after_reuse(code: AuthorizationCode, ctx: TokenContext, why: str) -> None:
    """§4.1.2: a code used twice is refused and what its first use issued is revoked."""
    grant = code.grant
    await ctx.revoker.revoke_grant(grant.id, reason="code_reused", ip=ctx.ip)
    audit("code_reused", actor="client", subject=grant.user_id, client_id=grant.client_id, grant_id=grant.id, ip=ctx.ip)
    raise InvalidGrantError(UNUSABLE, detail=f"{why}: grant {grant.id} revoked")


async def _announce_ended(ended: list[EndedGrant], grant: Grant, ctx: TokenContext) -> None:
    """The grants the redemption ended (already written): their audit events and the
    revocation fed to the resource servers."""
    for gone in ended:
        log.info("grant_ended_by_sign_in", grant_id=gone.grant_id, reason=gone.reason, by_grant_id=grant.id)
        await ctx.revoker.announce_ended(gone.grant_id, reason=gone.reason)


def _check_client(code: AuthorizationCode, client: Client) -> None:
    if code.grant.client_id != client.client_id:
        raise InvalidGrantError(
            "the authorization code was issued to another client",
            detail=f"grant {code.grant.id} is client {code.grant.client_id}'s, not {client.client_id}'s",
        )


def _check_expiry(code: AuthorizationCode, now: int) -> None:
    if code.expires_at <= now:
        raise InvalidGrantError(
            "the authorization code has expired", detail=f"expired {now - code.expires_at} s ago (at {code.expires_at})"
        )


def _check_still_valid(grant: Grant, user: User) -> None:
    if grant.revoked:
        raise InvalidGrantError("the authorization grant is no longer valid", detail=f"grant {grant.id} is revoked")
    if user.disabled:
        raise InvalidGrantError("the authorization grant is no longer valid", detail=f"user {user.id} is disabled")


def _check_dpop_key(code: AuthorizationCode, jkt: str | None) -> None:
    # RFC 9449 §10: a code asked for with `dpop_jkt` is redeemed only with a proof by that key.
    if code.dpop_jkt is not None and jkt != code.dpop_jkt:
        raise InvalidGrantError(
            "the authorization code is bound to a DPoP key (dpop_jkt): send a proof made with it",
            detail=f"the code is bound to {code.dpop_jkt}; the proof's key: {jkt or 'no proof'}",
        )


def _check_redirect_uri(code: AuthorizationCode, redirect_uri: str) -> None:
    # §4.1.3: identical to the value in the authorization request.
    if redirect_uri != code.redirect_uri:
        raise InvalidGrantError(
            "redirect_uri differs from the one in the authorization request",
            detail=f"the code was issued for {code.redirect_uri!r}, the request sent {redirect_uri[:200]!r}",
        )
