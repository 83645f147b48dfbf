"""Signing keys in `authz_signing_keys`; the private half sealed under the KEK.

Every replica reads the same rows, so every replica signs with the same active key.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from cryptography.exceptions import InvalidTag

from courseschool.common.errors import InvalidTokenError
from courseschool.common.jose import KeyEncryptor, generate_signing_key, key_set, sign_jwt, verify_access_token

from ..protocol.clock import Clock

SIGNING_ALGS = ("ES256", "RS256")

_LIST = """
SELECT kid, alg, public_jwk, private_jwk, state FROM authz_signing_keys
WHERE state IN ('next', 'active', 'retired') ORDER BY created_at
"""
_INSERT_ACTIVE = """
INSERT INTO authz_signing_keys (kid, alg, public_jwk, private_jwk, state, activated_at)
VALUES ($1, $2, $3, $4, 'active', now())
ON CONFLICT DO NOTHING
"""


class KeyDecryptionError(RuntimeError):
    """The stored keys were sealed under another key-encryption key."""


class KeyRing:
    """The loaded keys: the active private key per algorithm, and the public JWKS."""

    def __init__(self, rows: list[asyncpg.Record], encryptor: KeyEncryptor, *, issuer: str, clock: Clock) -> None:
        self._issuer = issuer
        self._clock = clock
        self._active: dict[str, dict[str, Any]] = {}
        self._public: list[dict[str, Any]] = []
        for row in rows:
            self._public.append(row["public_jwk"])
            if row["state"] == "active":
                try:
                    self._active[row["alg"]] = encryptor.open(row["kid"], row["private_jwk"])
                except InvalidTag:
                    raise KeyDecryptionError(
                        f"signing key {row['kid']} cannot be opened with this KEY_ENCRYPTION_KEY"
                    ) from None

        self._key_set = key_set(self._public) if self._public else None

    @property
    def public_jwks(self) -> list[dict[str, Any]]:
        return list(self._public)

    def has_active(self, alg: str) -> bool:
        return alg in self._active

    def sign_access_token(self, claims: dict[str, Any]) -> str:
        return sign_jwt(claims, self._active["ES256"], typ="at+jwt")

    def sign_id_token(self, claims: dict[str, Any], alg: str) -> str:
        return sign_jwt(claims, self._active[alg], typ="JWT")

    def verify(self, token: str, *, leeway: int = 0) -> dict[str, Any]:
        """One of our access tokens: signature, typ, issuer, expiry (RFC 9068 §4)."""
        if self._key_set is None:
            raise InvalidTokenError("no signing keys are published")
        return verify_access_token(
            token, self._key_set, issuer=self._issuer, audience=None, now=self._clock.now(), leeway=leeway
        )


class PgKeyStore:
    def __init__(self, pool: asyncpg.Pool, encryptor: KeyEncryptor, *, issuer: str, clock: Clock) -> None:
        self._pool = pool
        self._encryptor = encryptor
        self._issuer = issuer
        self._clock = clock

    async def load(self) -> KeyRing:
        return KeyRing(await self._pool.fetch(_LIST), self._encryptor, issuer=self._issuer, clock=self._clock)

    async def ensure_active(self) -> KeyRing:
        """Create an active key for each algorithm that has none. The partial unique
        index makes concurrent start-ups of several replicas agree on one key."""
        ring = await self.load()
        missing = [alg for alg in SIGNING_ALGS if not ring.has_active(alg)]
        for alg in missing:
            kid, private, public = generate_signing_key(alg)
            await self._pool.execute(_INSERT_ACTIVE, kid, alg, public, self._encryptor.seal(kid, private))
        return await self.load() if missing else ring
