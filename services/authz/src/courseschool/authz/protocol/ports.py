"""The small storage ports protocol code depends on; Postgres stores implement them."""

from __future__ import annotations

from enum import Enum
from typing import Any, Protocol

from .models import AccessTokenHolder, AuthorizationCode, Client, EndedGrant, Grant, RefreshToken, User


class ClientStore(Protocol):
    async def get(self, client_id: str) -> Client | None: ...


class UserStore(Protocol):
    async def get(self, user_id: str) -> User | None: ...


class CodeStore(Protocol):
    async def get(self, code: str) -> AuthorizationCode | None: ...


class Rotation(Enum):
    ROTATED = "rotated"
    ALREADY_USED = "already_used"  # another request rotated it first
    GRANT_REVOKED = "grant_revoked"


class GrantStore(Protocol):
    async def get(self, grant_id: str) -> Grant | None: ...

    async def access_token_holder(self, grant_id: str, jti: str) -> AccessTokenHolder | None:
        """The grant an access token was issued under, its user, and whether the token
        (`jti`) was revoked on its own; None for an unknown grant."""

    async def get_refresh_token(self, token: str) -> RefreshToken | None: ...

    async def rotate_refresh_token(self, *, old: str, new: str, grant_id: str, replay: bytes, now: int) -> Rotation:
        """Consume `old` and record `new` in one transaction that excludes a
        concurrent revocation of the grant."""

    async def redeem_code(
        self,
        *,
        code: str,
        refresh_token: str | None,
        scope: str,
        resource: str,
        now: int,
        grants_per_app: int,
        dpop_jkt: str | None = None,
    ) -> list[EndedGrant] | None:
        """Consume the code atomically, recording the first refresh token (and the DPoP
        key the grant's refresh tokens are bound to) in the same transaction; None when
        the code was used already. The user's other live grants of the client stay, but
        for those the same transaction ends and returns: any bound to the same DPoP key
        (`replaced`) and the least recently used beyond `grants_per_app` (`superseded`)."""

    async def bind_dpop_key(self, grant_id: str, jkt: str) -> str | None:
        """Bind an unbound grant's refresh tokens to `jkt`; the key bound afterwards."""


class BlockStore(Protocol):
    async def blocked(self, school_id: str, keys: list[str]) -> object | None:
        """The school's block covering a client with these keys (`school_blocks.lookup_keys`), if any."""
        ...


class Revoker(Protocol):
    """Revocation: written to Postgres first, then fanned out to resource servers."""

    async def revoke_grant(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        """`ip`: the address of the request that ended it, for the event's record."""

    async def announce_ended(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        """A grant another statement ended (a code exchange's): the audit event and the
        fan-out to resource servers that `revoke_grant` sends after its own write."""

    async def revoke_access_token(self, *, jti: str, grant_id: str, expires_at: int) -> None: ...


class AccessTokenVerifier(Protocol):
    def verify(self, token: str, *, leeway: int = 0) -> dict[str, Any]:
        """Signature, `typ`, issuer and expiry of one of our access tokens; raises
        InvalidTokenError."""


class Signer(Protocol):
    def sign_access_token(self, claims: dict[str, Any]) -> str: ...

    def sign_id_token(self, claims: dict[str, Any], alg: str) -> str: ...
