"""How a caller authenticates, in the OpenAPI documents: the security schemes every
document declares (OAuth 2.0 with PKCE, DPoP-bound tokens, RFC 7592's registration
access token) and the DPoP headers of the operations that take a proof."""

from __future__ import annotations

from typing import Any

from .dpop import ALGORITHMS as DPOP_ALGORITHMS
from .scopes import SCOPES


def security_schemes(base_url: str) -> dict[str, Any]:
    """`components.securitySchemes` of every document."""
    return {"oauth2": oauth2_scheme(base_url), "dpop": dpop_scheme(), "registration": registration_scheme()}


def oauth2_scheme(base_url: str) -> dict[str, Any]:
    return {
        "type": "oauth2",
        "description": "Authorization code with PKCE (S256); see /auth.md. The access token goes in "
        "`Authorization: Bearer <token>` (or `DPoP` with a proof).",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": f"{base_url}/oauth/authorize",
                "tokenUrl": f"{base_url}/api/oauth/token",
                "refreshUrl": f"{base_url}/api/oauth/token",
                "scopes": {s.name: s.description for s in SCOPES},
            }
        },
    }


def dpop_scheme() -> dict[str, Any]:
    """RFC 9449 §7.1: a DPoP-bound access token in `Authorization: DPoP <token>`, with a
    proof in the `DPoP` header (its `ath` the token's hash)."""
    return {
        "type": "http",
        "scheme": "DPoP",
        "description": "A DPoP-bound access token (RFC 9449: the token response said `token_type: DPoP`) as "
        "`Authorization: DPoP <token>`, with a new proof JWT in the `DPoP` header on every request (`htm`, "
        f"`htu`, `iat`, `jti`, `ath`; `alg` one of {', '.join(DPOP_ALGORITHMS)}). The scopes are the "
        "same as with `oauth2`; see /auth.md.",
    }


def registration_scheme() -> dict[str, Any]:
    """RFC 7592 §2: the registration access token of a client's configuration endpoint."""
    return {
        "type": "http",
        "scheme": "bearer",
        "description": "RFC 7592: the `registration_access_token` the registration answered, as "
        "`Authorization: Bearer <token>`, for the client's own `registration_client_uri` only.",
    }


DPOP_HEADER = {
    "name": "DPoP",
    "in": "header",
    "required": False,
    "description": "RFC 9449 §4: a DPoP proof JWT for this request. With it the access token is bound to the "
    "proof's key (`token_type: DPoP`, `cnf.jkt`), and so is a public client's refresh token.",
    "schema": {"type": "string"},
    "example": "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7fX0.eyJodG0iOiJQT1NUIn0.c2lnbmF0dXJl",
}
DPOP_NONCE_HEADER = {
    "DPoP-Nonce": {
        "description": "RFC 9449 §8: the nonce to put in the next DPoP proofs, when the server requires nonces.",
        "schema": {"type": "string"},
        "example": "eyJ7S_zG.eyJH0-Z.HX4w-7v",
    }
}
