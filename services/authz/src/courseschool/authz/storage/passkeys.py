"""Passkeys in `authz_passkeys` (protocol/passkeys.py), and the challenges of their
ceremonies in Redis.

A passkey's counter moves forward in one statement (`_USE`): of two assertions with the
same counter only one is accepted. A challenge (WebAuthn §13.4.3: random, used once) is
kept under the digest of what it is bound to (the signed-in session, the interaction,
or the sign-in page's cookie) and its purpose, for CHALLENGE_TTL seconds, and taken with
GETDEL: a second answer to it finds nothing."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from typing import cast

import asyncpg
import msgspec
import redis.asyncio as aioredis

from courseschool.common.secrets import digest

from ..protocol.passkeys import CHALLENGE_TTL

_COLUMNS = "id::text, user_id::text, credential_id, public_key, sign_count, name, created_at, last_used_at"
_OF_USER = f"SELECT {_COLUMNS} FROM authz_passkeys WHERE user_id = $1 ORDER BY created_at, id"
_BY_CREDENTIAL = f"SELECT {_COLUMNS} FROM authz_passkeys WHERE credential_id = $1 AND rp_id = $2"
_ADD = """
INSERT INTO authz_passkeys (id, user_id, credential_id, public_key, sign_count, rp_id, name, backed_up, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9))
ON CONFLICT (credential_id) DO NOTHING
RETURNING id::text
"""
# The counter only grows; an authenticator that keeps none reports 0 every time.
_USE = """
UPDATE authz_passkeys SET sign_count = $2, backed_up = $3, last_used_at = to_timestamp($4)
WHERE id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))
RETURNING 1
"""
_RENAME = "UPDATE authz_passkeys SET name = $3 WHERE id = $1 AND user_id = $2 RETURNING 1"
_REMOVE = "DELETE FROM authz_passkeys WHERE id = $1 AND user_id = $2 RETURNING name"

_CHALLENGE = "authz:passkey-challenge:"


class Passkey(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    user_id: str
    credential_id: bytes
    public_key: bytes
    sign_count: int
    name: str
    created_at: int
    last_used_at: int | None


def _passkey(row: asyncpg.Record) -> Passkey:
    last = row["last_used_at"]
    return Passkey(
        id=row["id"],
        user_id=row["user_id"],
        credential_id=bytes(row["credential_id"]),
        public_key=bytes(row["public_key"]),
        sign_count=row["sign_count"],
        name=row["name"],
        created_at=int(row["created_at"].timestamp()),
        last_used_at=int(last.timestamp()) if last is not None else None,
    )


class PgPasskeyStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def of_user(self, user_id: str) -> list[Passkey]:
        return [_passkey(r) for r in await self._pool.fetch(_OF_USER, uuid.UUID(user_id))]

    async def by_credential(self, credential_id: bytes, rp_id: str) -> Passkey | None:
        row = await self._pool.fetchrow(_BY_CREDENTIAL, credential_id, rp_id)
        return _passkey(row) if row is not None else None

    async def add(
        self,
        user_id: str,
        *,
        credential_id: bytes,
        public_key: bytes,
        sign_count: int,
        rp_id: str,
        name: str,
        backed_up: bool,
        now: int,
    ) -> str | None:
        """The new passkey's id; None when that credential is registered already."""
        return cast(
            str | None,
            await self._pool.fetchval(
                _ADD,
                uuid.uuid4(),
                uuid.UUID(user_id),
                credential_id,
                public_key,
                sign_count,
                rp_id,
                name,
                backed_up,
                now,
            ),
        )

    async def use(self, passkey_id: str, sign_count: int, *, backed_up: bool, now: int) -> bool:
        """Record an accepted assertion: False when another with this counter came first."""
        return await self._pool.fetchval(_USE, uuid.UUID(passkey_id), sign_count, backed_up, now) is not None

    async def rename(self, user_id: str, passkey_id: str, name: str) -> bool:
        return await self._pool.fetchval(_RENAME, uuid.UUID(passkey_id), uuid.UUID(user_id), name) is not None

    async def remove(self, user_id: str, passkey_id: str) -> str | None:
        """The removed passkey's name; None: the person has no such passkey."""
        return cast(str | None, await self._pool.fetchval(_REMOVE, uuid.UUID(passkey_id), uuid.UUID(user_id)))


class RedisPasskeyChallenges:
    def __init__(self, redis: aioredis.Redis) -> None:
        self._redis = redis

    async def issue(self, purpose: str, binding: str) -> bytes:
        """A new challenge for this purpose and binding (replacing one not yet answered)."""
        challenge = secrets.token_bytes(32)
        await self._redis.set(_key(purpose, binding), challenge, ex=CHALLENGE_TTL)
        return challenge

    async def take(self, purpose: str, binding: str | None) -> bytes | None:
        """The challenge, once; None when it was used, expired or never issued."""
        if not binding or len(binding) > 128:
            return None
        return cast(bytes | None, await self._redis.getdel(_key(purpose, binding)))


def _key(purpose: str, binding: str) -> str:
    return _CHALLENGE + digest(f"{purpose}:{binding}").hex()


@dataclass(frozen=True, slots=True)
class Passkeys:
    """What the passkeys' use cases are given: the keys, and their ceremonies' challenges."""

    keys: PgPasskeyStore
    challenges: RedisPasskeyChallenges

    @classmethod
    def build(cls, pool: asyncpg.Pool, redis: aioredis.Redis) -> Passkeys:
        return cls(keys=PgPasskeyStore(pool), challenges=RedisPasskeyChallenges(redis))
