"""The small storage ports protocol code depends on; Postgres stores implement them."""

from __future__ import annotations

from typing import Any, Protocol

from .models import AuthorizationCode, Client, Grant, User


class ClientStore(Protocol):
    async def get(self, client_id: str) -> Client | None: ...


class UserStore(Protocol):
    async def get(self, user_id: str) -> User | None: ...


class CodeStore(Protocol):
    async def get(self, code: str) -> AuthorizationCode | None: ...


class GrantStore(Protocol):
    async def get(self, grant_id: str) -> Grant | None: ...

    async def revoke(self, grant_id: str, *, reason: str) -> None: ...

    async def redeem_code(self, *, code: str, refresh_token: str | None, scope: str, resource: str, now: int) -> bool:
        """Consume the code atomically, recording the first refresh token in the same
        transaction; False when the code was used already."""


class Signer(Protocol):
    def sign_access_token(self, claims: dict[str, Any]) -> str: ...

    def sign_id_token(self, claims: dict[str, Any], alg: str) -> str: ...
