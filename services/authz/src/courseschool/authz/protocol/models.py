"""The records protocol code works on. Frozen msgspec Structs, built by the stores."""

from __future__ import annotations

import msgspec


class Client(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    client_name: str | None
    redirect_uris: list[str]
    token_endpoint_auth_method: str  # "none" | "client_secret_post"
    grant_types: list[str]
    response_types: list[str]
    application_type: str
    scope: str | None
    id_token_signed_response_alg: str
    secret_hash: bytes | None
    is_integration: bool
    client_id_issued_at: int
    disabled: bool = False
    # For a client identified by its metadata document URL: the host it was fetched from.
    verified_origin: str | None = None
    # RFC 9449 §5.2: every token request of this client must carry a DPoP proof.
    dpop_bound_access_tokens: bool = False
    # RFC 7591 §2: pages the client says describe it (self-declared, shown as such).
    client_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None

    @property
    def is_public(self) -> bool:
        return self.token_endpoint_auth_method == "none"


class User(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    school_id: str
    email: str
    email_verified: bool
    name: str
    preferred_username: str
    role: str
    disabled: bool = False


class Grant(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    client_id: str
    user_id: str
    school_id: str
    scope: str
    resource: str
    auth_time: int
    created_at: int
    revoked: bool
    dpop_jkt: str | None = None  # RFC 9449 §5: the key its refresh tokens are bound to


class EndedGrant(msgspec.Struct, frozen=True, kw_only=True):
    """A grant a code exchange ended in its own statement: `replaced` (a new sign-in bound
    to the same DPoP key: the same install) or `superseded` (past GRANTS_PER_APP)."""

    grant_id: str
    reason: str


class AuthorizationCode(msgspec.Struct, frozen=True, kw_only=True):
    grant: Grant  # the approval the code stands for (its client, user, scope, resource)
    user: User  # the grant's user as it is now, read with the code (one round trip)
    redirect_uri: str
    code_challenge: str
    nonce: str | None
    expires_at: int
    consumed: bool
    dpop_jkt: str | None = None  # RFC 9449 §10: the key the exchange must prove


class RefreshToken(msgspec.Struct, frozen=True, kw_only=True):
    grant: Grant
    user: User  # the grant's user, read with the token (one round trip for both)
    scope: str
    resource: str
    created_at: int
    consumed_at: int | None
    replay: bytes | None
    successor_live: bool  # the token it was rotated into is still unused


class AccessTokenHolder(msgspec.Struct, frozen=True, kw_only=True):
    """What an access token stands for now, read in one round trip: its grant, the
    grant's user, and whether the token itself was revoked (RFC 7009)."""

    grant: Grant
    user: User
    token_revoked: bool

    @property
    def live(self) -> bool:
        return not (self.grant.revoked or self.token_revoked or self.user.disabled)


class TokenResponse(msgspec.Struct, frozen=True, omit_defaults=True):
    """RFC 6749 §5.1 field names exactly; `id_token` per OIDC Core §3.1.3.3."""

    access_token: str
    token_type: str
    expires_in: int
    scope: str
    refresh_token: str | None = None
    id_token: str | None = None
