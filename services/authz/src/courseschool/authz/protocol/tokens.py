"""Minting tokens.

Access token: a JWT per RFC 9068 §2.2 (`iss`, `exp`, `aud`, `sub`, `client_id`,
`iat`, `jti`, `scope`, `auth_time`), plus `school_id` (the school the user acts for)
and `grant_id` (so a revoked grant revokes its access tokens); with a DPoP proof at the
token endpoint, bound to the proof's key (`cnf.jkt`, RFC 9449 §6.1) and of
`token_type` `DPoP` (§5).
ID token: OIDC Core §2 and §3.1.3.6 (`at_hash`), `nonce` from the request.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import msgspec

from courseschool.common.dpop import SCHEME as DPOP
from courseschool.common.errors import InvalidRequestError
from courseschool.common.secrets import new_token

from .models import Client, Grant, TokenResponse, User
from .ports import Signer


class TokenPolicy(msgspec.Struct, frozen=True, kw_only=True):
    issuer: str
    access_token_ttl: int
    id_token_ttl: int


def at_hash(access_token: str) -> str:
    """OIDC Core §3.1.3.6: left half of the hash of the ASCII token, base64url.
    RS256 and ES256 both use SHA-256."""
    half = hashlib.sha256(access_token.encode("ascii")).digest()[:16]
    return base64.urlsafe_b64encode(half).rstrip(b"=").decode()


def access_token_claims(
    policy: TokenPolicy, *, grant: Grant, scope: str, resource: str, now: int, jkt: str | None = None
) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "iss": policy.issuer,
        "sub": grant.user_id,
        "aud": resource,
        "client_id": grant.client_id,
        "scope": scope,
        "jti": new_token(16),
        "iat": now,
        "nbf": now,
        "exp": now + policy.access_token_ttl,
        "auth_time": grant.auth_time,
        "school_id": grant.school_id,
        "grant_id": grant.id,
    }
    if jkt is not None:
        claims["cnf"] = {"jkt": jkt}
    return claims


def require_proof_if_bound(client: Client, jkt: str | None) -> None:
    """RFC 9449 §5.2: a client registered with `dpop_bound_access_tokens` sends a DPoP
    proof with every token request."""
    if jkt is None and client.dpop_bound_access_tokens:
        raise InvalidRequestError(
            "this client is registered with dpop_bound_access_tokens: send a DPoP proof",
            detail=f"client {client.client_id} sent a token request without a DPoP proof",
        )


def refresh_binding(client: Client, jkt: str | None) -> str | None:
    """RFC 9449 §5: a public client's refresh tokens are bound to the key of its proof; a
    confidential client's are bound to its credentials already, and are not."""
    return jkt if client.is_public else None


def id_token_claims(
    policy: TokenPolicy, *, grant: Grant, user: User, nonce: str | None, access_token: str, now: int
) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "iss": policy.issuer,
        "sub": user.id,
        "aud": grant.client_id,
        "azp": grant.client_id,
        "iat": now,
        "exp": now + policy.id_token_ttl,
        "auth_time": grant.auth_time,
        "at_hash": at_hash(access_token),
    }
    if nonce is not None:
        claims["nonce"] = nonce
    return claims


def mint(
    policy: TokenPolicy,
    signer: Signer,
    *,
    client: Client,
    grant: Grant,
    user: User,
    scope: str,
    resource: str,
    nonce: str | None,
    refresh_token: str | None,
    now: int,
    jkt: str | None = None,
) -> TokenResponse:
    claims = access_token_claims(policy, grant=grant, scope=scope, resource=resource, now=now, jkt=jkt)
    access = signer.sign_access_token(claims)
    id_token = None
    if "openid" in scope.split():
        claims = id_token_claims(policy, grant=grant, user=user, nonce=nonce, access_token=access, now=now)
        id_token = signer.sign_id_token(claims, client.id_token_signed_response_alg)
    return TokenResponse(
        access_token=access,
        token_type=DPOP if jkt is not None else "Bearer",
        expires_in=policy.access_token_ttl,
        scope=scope,
        refresh_token=refresh_token,
        id_token=id_token,
    )
