"""Signing keys in `authz_signing_keys`; the private half sealed under the KEK.

Every replica reads the same rows and reloads them periodically, so every replica
signs with the same active key; rotation steps (see `protocol.key_rotation`) run
under a transaction-scoped advisory lock, so one replica at a time takes them.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import asyncpg
import msgspec
from cryptography.exceptions import InvalidTag

from courseschool.common.clock import Clock
from courseschool.common.errors import InvalidTokenError
from courseschool.common.http import held
from courseschool.common.jose import (
    KeyEncryptor,
    SigningKey,
    VerifiedTokens,
    generate_signing_key,
    key_set,
    verify_id_token_hint,
)
from courseschool.common.logging import get_logger

from ..protocol.key_rotation import Action, KeyInfo, RotationPolicy, plan, published

log = get_logger(__name__)

SIGNING_ALGS = ("ES256", "RS256")
_ROTATION_LOCK = 0x6B657973  # "keys"

_COLUMNS = """kid, alg, state, extract(epoch FROM created_at)::bigint AS created_at,
    extract(epoch FROM activated_at)::bigint AS activated_at, extract(epoch FROM retired_at)::bigint AS retired_at"""
_LIST = f"SELECT {_COLUMNS}, public_jwk, private_jwk FROM authz_signing_keys ORDER BY created_at, kid"
_INSERT = """
INSERT INTO authz_signing_keys (kid, alg, public_jwk, private_jwk, state, created_at, activated_at)
VALUES ($1, $2, $3, $4, $5, to_timestamp($6), CASE WHEN $5 = 'active' THEN to_timestamp($6) END)
"""
_RETIRE_ACTIVE = """
UPDATE authz_signing_keys SET state = 'retired', retired_at = to_timestamp($2)
WHERE alg = $1 AND state = 'active'
"""
_PROMOTE_NEXT = """
UPDATE authz_signing_keys SET state = 'active', activated_at = to_timestamp($2)
WHERE alg = $1 AND state = 'next'
"""


class KeyDecryptionError(RuntimeError):
    """The stored keys were sealed under another key-encryption key."""


def _info(row: asyncpg.Record) -> KeyInfo:
    return KeyInfo(
        kid=row["kid"],
        alg=row["alg"],
        state=row["state"],
        created_at=row["created_at"],
        activated_at=row["activated_at"],
        retired_at=row["retired_at"],
    )


@functools.lru_cache(maxsize=8)
def _imported(private_jwk: bytes) -> SigningKey:
    """The signing key of this private JWK, imported once per process. Importing an RSA
    key checks it, tens of milliseconds (74 ms on a slow core), and every key load would
    pay it again for a key that did not change: each reload (KEY_RELOAD_INTERVAL, each
    announced rotation, each new subscription), and each app a process starts (the test
    suite starts thousands). The few keys active at once, and those just replaced, fit."""
    return SigningKey(msgspec.json.decode(private_jwk))


class KeyRing:
    """The loaded keys: the active private key per algorithm, and the public JWKS."""

    def __init__(
        self,
        rows: list[asyncpg.Record],
        encryptor: KeyEncryptor,
        *,
        issuer: str,
        clock: Clock,
        policy: RotationPolicy,
    ) -> None:
        self._issuer = issuer
        self._clock = clock
        self._active: dict[str, SigningKey] = {}
        self.imported: dict[str, SigningKey] = {}  # kid -> the active key imported for it
        self.activated: dict[str, int] = {}  # alg -> when its active key began signing
        self._public: list[dict[str, Any]] = []
        now = clock.now()
        for row in rows:
            info = _info(row)
            if published(info, now, policy):
                self._public.append(row["public_jwk"])
            if info.state == "active":
                self.activated[info.alg] = info.activated_at or info.created_at
                self._active[info.alg] = self._signing_key(info.kid, bytes(row["private_jwk"]), encryptor)
        self._key_set = key_set(self._public) if self._public else None
        # Introspection and UserInfo see the same tokens again and again: their
        # signature is checked once per key load (common.jose.VerifiedTokens).
        self._verified = (
            VerifiedTokens(self._key_set, issuer=issuer, audience=None) if self._key_set is not None else None
        )
        # The JWKS document, serialised once per load: every client and resource server fetches it.
        self.jwks = held(msgspec.json.encode({"keys": self._public}))

    def _signing_key(self, kid: str, sealed: bytes, encryptor: KeyEncryptor) -> SigningKey:
        """The stored key, opened with the key-encryption key (every load: a wrong one
        is refused at once) and imported, or taken again from this process's earlier
        import of the same key."""
        try:
            opened = encryptor.open_bytes(kid, sealed)
        except InvalidTag:
            raise KeyDecryptionError(f"signing key {kid} cannot be opened with this KEY_ENCRYPTION_KEY") from None
        key = _imported(opened)
        self.imported[kid] = key
        return key

    def active_kid(self, alg: str) -> str | None:
        key = self._active.get(alg)
        return key.kid if key else None

    def has_active(self, alg: str) -> bool:
        return alg in self._active

    def sign_access_token(self, claims: dict[str, Any]) -> str:
        return self._active["ES256"].sign(claims, typ="at+jwt")

    def sign_id_token(self, claims: dict[str, Any], alg: str) -> str:
        return self._active[alg].sign(claims, typ="JWT")

    def id_token_hint(self, token: str) -> dict[str, Any]:
        """The claims of an ID token of ours (expired or not), for RP-Initiated Logout."""
        if self._key_set is None:
            raise InvalidTokenError("no signing keys are published")
        return verify_id_token_hint(token, self._key_set, issuer=self._issuer)

    def verify(self, token: str, *, leeway: int = 0) -> dict[str, Any]:
        """One of our access tokens: signature, typ, issuer, expiry (RFC 9068 §4)."""
        if self._verified is None:
            raise InvalidTokenError("no signing keys are published")
        return self._verified.verify(token, now=self._clock.now(), leeway=leeway)


class PgKeyStore:
    def __init__(
        self, pool: asyncpg.Pool, encryptor: KeyEncryptor, *, issuer: str, clock: Clock, policy: RotationPolicy
    ) -> None:
        self._pool = pool
        self._encryptor = encryptor
        self._issuer = issuer
        self._clock = clock
        self.policy = policy

    async def load(self) -> KeyRing:
        rows = await self._pool.fetch(_LIST)
        return KeyRing(rows, self._encryptor, issuer=self._issuer, clock=self._clock, policy=self.policy)

    async def infos(self) -> list[KeyInfo]:
        return [_info(r) for r in await self._pool.fetch(_LIST)]

    async def maintain(self) -> list[str]:
        """Take the rotation steps that are due; return them, as "<alg>:<action>"."""
        return await self._step(lambda keys, alg, now: plan(keys, alg, now, self.policy))

    async def rotate_now(self, alg: str, *, immediate: bool = False) -> list[str]:
        """On demand: publish a next key; with `immediate` (a compromised key), also
        make it sign at once instead of after the publication lead."""

        def decide(keys: list[KeyInfo], key_alg: str, now: int) -> Action | None:
            if key_alg != alg:
                return None
            has_next = any(k.alg == alg and k.state == "next" for k in keys)
            if not has_next:
                return Action.CREATE_NEXT
            return Action.PROMOTE_NEXT if immediate else None

        done = await self._step(decide)
        if immediate and done == [f"{alg}:create_next"]:
            done += await self._step(decide)
        return done

    async def _step(self, decide: Any) -> list[str]:
        done: list[str] = []
        async with self._pool.acquire() as conn, conn.transaction():
            if not await conn.fetchval("SELECT pg_try_advisory_xact_lock($1)", _ROTATION_LOCK):
                return done  # another replica is at it
            keys = [_info(r) for r in await conn.fetch(_LIST)]
            now = self._clock.now()
            for alg in SIGNING_ALGS:
                action = decide(keys, alg, now)
                if action is None:
                    continue
                await self._apply(conn, action, alg, now)
                done.append(f"{alg}:{action.value}")
                log.info("signing_key_rotated", alg=alg, action=action.value)
        return done

    async def _apply(self, conn: asyncpg.Connection, action: Action, alg: str, now: int) -> None:
        if action is Action.PROMOTE_NEXT:
            await conn.execute(_RETIRE_ACTIVE, alg, now)
            await conn.execute(_PROMOTE_NEXT, alg, now)
            return
        kid, private, public = generate_signing_key(alg)
        state = "active" if action is Action.CREATE_ACTIVE else "next"
        await conn.execute(_INSERT, kid, alg, public, self._encryptor.seal(kid, private), state, now)

    async def ensure_active(self) -> KeyRing:
        """Start-up: make sure every algorithm has an active key, then load."""
        for _ in range(100):
            ring = await self.load()
            if all(ring.has_active(alg) for alg in SIGNING_ALGS):
                return ring
            await self.maintain()  # does nothing while another replica holds the lock
            await asyncio.sleep(0.05)
        raise RuntimeError("no active signing key could be made")
