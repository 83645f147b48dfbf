"""Builders and in-memory fakes shared by the unit tests (no database, no network)."""

from __future__ import annotations

from typing import Any

from courseschool.authz.protocol.context import TokenContext
from courseschool.authz.protocol.models import AuthorizationCode, Client, Grant, RefreshToken, User
from courseschool.authz.protocol.school_policy import Standing
from courseschool.authz.protocol.tokens import TokenPolicy
from courseschool.common.clock import FrozenClock

LOOPBACK_CB = "http://127.0.0.1:8080/callback"
RESOURCE = "http://127.0.0.1:8000"
GRANTS_PER_APP = 10


def make_client(**overrides: Any) -> Client:
    fields: dict[str, Any] = {
        "client_id": "client-1",
        "client_name": "Test app",
        "redirect_uris": [LOOPBACK_CB],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "application_type": "native",
        "scope": None,
        "id_token_signed_response_alg": "RS256",
        "secret_hash": None,
        "is_integration": False,
        "client_id_issued_at": 1_700_000_000,
        "disabled": False,
    }
    fields.update(overrides)
    return Client(**fields)


def make_user(**overrides: Any) -> User:
    fields: dict[str, Any] = {
        "id": "user-1",
        "school_id": "school-1",
        "email": "ada@example.com",
        "email_verified": True,
        "name": "Ada Lovelace",
        "preferred_username": "ada",
        "role": "owner",
        "disabled": False,
    }
    fields.update(overrides)
    return User(**fields)


def make_grant(**overrides: Any) -> Grant:
    fields: dict[str, Any] = {
        "id": "grant-1",
        "client_id": "client-1",
        "user_id": "user-1",
        "school_id": "school-1",
        "scope": "openid courses:read",
        "resource": RESOURCE,
        "auth_time": 1_700_000_000,
        "created_at": 1_700_000_000,
        "revoked": False,
    }
    fields.update(overrides)
    return Grant(**fields)


def make_code(**overrides: Any) -> AuthorizationCode:
    """A code of `make_grant()`'s grant and `make_user()`'s user (override `grant`, `user`)."""
    fields: dict[str, Any] = {
        "grant": make_grant(),
        "user": make_user(),
        "redirect_uri": LOOPBACK_CB,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "nonce": "n-0S6_WzA2Mj",
        "expires_at": 1_700_000_060,
        "consumed": False,
    }
    fields.update(overrides)
    return AuthorizationCode(**fields)


def make_refresh_token(**overrides: Any) -> RefreshToken:
    """An unused refresh token of `make_grant()`'s grant, made when the grant was."""
    fields: dict[str, Any] = {
        "grant": make_grant(),
        "user": make_user(),
        "scope": "openid courses:read",
        "resource": RESOURCE,
        "created_at": 1_700_000_000,
        "consumed_at": None,
        "replay": None,
        "successor_live": False,
    }
    fields.update(overrides)
    return RefreshToken(**fields)


def token_context(*, codes: Any, grants: Any, users: Any, signer: Any, now: int) -> TokenContext:
    """What a grant handler is given: the ports passed in (`grants` is the revoker too),
    a frozen clock at `now`, a day's idle and a week's absolute refresh lifetime, and
    a ten-second retry window."""
    return TokenContext(
        users=users,
        codes=codes,
        grants=grants,
        revoker=grants,
        blocks=NoBlocks(),
        policies=AnyoneMayConnect(),
        signer=signer,
        verifier=signer,
        policy=TokenPolicy(issuer=RESOURCE, access_token_ttl=600, id_token_ttl=600),
        clock=FrozenClock(now),
        refresh_idle_ttl=86400,
        refresh_absolute_ttl=7 * 86400,
        refresh_grace=10,
        grants_per_app=GRANTS_PER_APP,
    )


class AnyoneMayConnect:
    """PolicyStore: every school lets anyone connect any app (the default)."""

    async def standing(self, school_id: str, client_id: str) -> Standing:
        return Standing()


class NoBlocks:
    """BlockStore: no school blocked anything."""

    async def blocked(self, school_id: str, keys: list[str]) -> object | None:
        return None


class InMemoryClients:
    """ClientStore: `async get(client_id)`."""

    def __init__(self, *clients: Client) -> None:
        self.by_id = {c.client_id: c for c in clients}
        self.calls: list[str] = []

    async def get(self, client_id: str) -> Client | None:
        self.calls.append(client_id)
        return self.by_id.get(client_id)


class RecordingSigner:
    """Signer whose tokens say what they were given, so tests can read them back."""

    def __init__(self) -> None:
        self.access_claims: list[dict[str, Any]] = []
        self.id_claims: list[tuple[dict[str, Any], str]] = []

    def sign_access_token(self, claims: dict[str, Any]) -> str:
        self.access_claims.append(claims)
        return f"at.{claims['sub']}.{claims['aud']}.{claims['scope'].replace(' ', '+')}"

    def sign_id_token(self, claims: dict[str, Any], alg: str) -> str:
        self.id_claims.append((claims, alg))
        return f"id.{alg}.{claims['aud']}.{claims.get('nonce')}"
