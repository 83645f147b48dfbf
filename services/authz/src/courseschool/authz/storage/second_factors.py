"""Second factors in `authz_totp` and `authz_recovery_codes`, and a school's
requirement of two-step sign-in in `authz_school_two_step` (passkeys, in
`authz_passkeys`, are storage/passkeys.py's; they are counted and reset here). The TOTP secret is sealed
under the key-encryption key (common/jose.KeyEncryptor, the user id as associated
data); recovery codes are kept as digests (protocol/second_factors). Single use is one
statement each: a code's step must be later than the last one accepted, a recovery
code unused."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from courseschool.common.jose import KeyEncryptor

from ..protocol.second_factors import recovery_code_digest

_TOTP = "SELECT secret, confirmed_at IS NOT NULL AS confirmed, last_step FROM authz_totp WHERE user_id = $1"
# An enrolment under way is replaced; a confirmed app stays until removed.
_BEGIN_TOTP = """
INSERT INTO authz_totp (user_id, secret, created_at) VALUES ($1, $2, to_timestamp($3))
ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at, last_step = 0
WHERE authz_totp.confirmed_at IS NULL
"""
_CONFIRM_TOTP = """
UPDATE authz_totp SET confirmed_at = to_timestamp($3), last_step = $2
WHERE user_id = $1 AND confirmed_at IS NULL AND last_step < $2
RETURNING 1
"""
_USE_TOTP = """
UPDATE authz_totp SET last_step = $2
WHERE user_id = $1 AND confirmed_at IS NOT NULL AND last_step < $2
RETURNING 1
"""
_DROP_UNCONFIRMED = "DELETE FROM authz_totp WHERE user_id = $1 AND confirmed_at IS NULL"
_REMOVE_TOTP = "DELETE FROM authz_totp WHERE user_id = $1 RETURNING confirmed_at IS NOT NULL"
_DROP_CODES = "DELETE FROM authz_recovery_codes WHERE user_id = $1"
_ADD_CODES = """
INSERT INTO authz_recovery_codes (user_id, code_hash, created_at)
SELECT $1, h, to_timestamp($3) FROM unnest($2::bytea[]) AS h
"""
_USE_CODE = """
UPDATE authz_recovery_codes SET used_at = to_timestamp($3)
WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
RETURNING 1
"""
_SUMMARY = """
SELECT
  EXISTS (SELECT 1 FROM authz_totp WHERE user_id = $1 AND confirmed_at IS NOT NULL) AS totp,
  (SELECT count(*) FROM authz_recovery_codes WHERE user_id = $1 AND used_at IS NULL) AS recovery_codes_left,
  (SELECT count(*) FROM authz_passkeys WHERE user_id = $1) AS passkeys
"""
_RESET = """
WITH t AS (DELETE FROM authz_totp WHERE user_id = $1 RETURNING 1),
     r AS (DELETE FROM authz_recovery_codes WHERE user_id = $1 RETURNING 1),
     p AS (DELETE FROM authz_passkeys WHERE user_id = $1 RETURNING 1)
SELECT (SELECT count(*) FROM t) AS totp, (SELECT count(*) FROM r) AS recovery_codes,
       (SELECT count(*) FROM p) AS passkeys
"""
_RULE = "SELECT required FROM authz_school_two_step WHERE school_id = $1"
_SET_RULE = """
INSERT INTO authz_school_two_step (school_id, required, changed_at, changed_by)
VALUES ($1, $2, to_timestamp($3), $4)
ON CONFLICT (school_id) DO UPDATE
SET required = EXCLUDED.required, changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
"""


class Totp(msgspec.Struct, frozen=True, kw_only=True):
    secret: str  # base32, opened
    confirmed: bool
    last_step: int


class Factors(msgspec.Struct, frozen=True, kw_only=True):
    """What a person has set up."""

    totp: bool
    recovery_codes_left: int
    passkeys: int = 0

    @property
    def any(self) -> bool:
        """A second step they can take at sign-in (recovery codes alone are a way back, not a factor)."""
        return self.totp or self.passkeys > 0


def _aad(user_id: str) -> str:
    return f"totp:{user_id}"


class PgSecondFactorStore:
    def __init__(self, pool: asyncpg.Pool, encryptor: KeyEncryptor, code_key: bytes) -> None:
        self._pool = pool
        self._encryptor = encryptor
        self._code_key = code_key  # keys the recovery codes' digests

    async def totp(self, user_id: str) -> Totp | None:
        row = await self._pool.fetchrow(_TOTP, uuid.UUID(user_id))
        if row is None:
            return None
        opened = self._encryptor.open(_aad(user_id), bytes(row["secret"]))
        return Totp(secret=opened["secret"], confirmed=row["confirmed"], last_step=row["last_step"])

    async def begin_totp(self, user_id: str, secret: str, *, now: int) -> None:
        sealed = self._encryptor.seal(_aad(user_id), {"secret": secret})
        await self._pool.execute(_BEGIN_TOTP, uuid.UUID(user_id), sealed, now)

    async def confirm_totp(self, user_id: str, step: int, *, now: int) -> bool:
        return await self._pool.fetchval(_CONFIRM_TOTP, uuid.UUID(user_id), step, now) is not None

    async def use_totp(self, user_id: str, step: int) -> bool:
        """Accept the code of `step` once: False when that step (or a later one) was used."""
        return await self._pool.fetchval(_USE_TOTP, uuid.UUID(user_id), step) is not None

    async def drop_unconfirmed_totp(self, user_id: str) -> None:
        """Forget an authenticator app being set up (a new password: its secret is not trusted)."""
        await self._pool.execute(_DROP_UNCONFIRMED, uuid.UUID(user_id))

    async def remove_totp(self, user_id: str) -> bool:
        """Forget the app; True when a confirmed one was removed."""
        return bool(await self._pool.fetchval(_REMOVE_TOTP, uuid.UUID(user_id)))

    async def replace_recovery_codes(self, user_id: str, codes: list[str], *, now: int) -> None:
        uid = uuid.UUID(user_id)
        digests = [recovery_code_digest(self._code_key, user_id, code) for code in codes]
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_DROP_CODES, uid)
            await conn.execute(_ADD_CODES, uid, digests, now)

    async def drop_recovery_codes(self, user_id: str) -> None:
        await self._pool.execute(_DROP_CODES, uuid.UUID(user_id))

    async def use_recovery_code(self, user_id: str, code: str, *, now: int) -> bool:
        code_digest = recovery_code_digest(self._code_key, user_id, code)
        return await self._pool.fetchval(_USE_CODE, uuid.UUID(user_id), code_digest, now) is not None

    async def factors(self, user_id: str) -> Factors:
        row = await self._pool.fetchrow(_SUMMARY, uuid.UUID(user_id))
        return Factors(totp=row["totp"], recovery_codes_left=row["recovery_codes_left"], passkeys=row["passkeys"])

    async def reset(self, user_id: str) -> dict[str, int]:
        """Every second factor of the person gone; how many of each."""
        row = await self._pool.fetchrow(_RESET, uuid.UUID(user_id))
        return {"totp": row["totp"], "recovery_codes": row["recovery_codes"], "passkeys": row["passkeys"]}

    async def two_step_rule(self, school_id: str) -> str:
        return await self._pool.fetchval(_RULE, uuid.UUID(school_id)) or "none"

    async def set_two_step_rule(self, school_id: str, rule: str, *, by: str, now: int) -> None:
        await self._pool.execute(_SET_RULE, uuid.UUID(school_id), rule, now, uuid.UUID(by))
