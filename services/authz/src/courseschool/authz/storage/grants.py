"""Grants, authorization codes and refresh tokens.

Only digests of codes and refresh tokens are stored. A code is consumed atomically
(`UPDATE ... WHERE consumed_at IS NULL RETURNING`), in the same transaction that
records the refresh token its redemption issues, so no half-written grant exists.
"""

from __future__ import annotations

import uuid

import asyncpg

from courseschool.common.secrets import digest

from ..protocol.models import AuthorizationCode, Grant

_GRANT_COLUMNS = """id::text, client_id, user_id::text, school_id::text, scope, resource,
    extract(epoch FROM auth_time)::bigint AS auth_time,
    extract(epoch FROM created_at)::bigint AS created_at, revoked_at IS NOT NULL AS revoked"""

_GET_GRANT = f"SELECT {_GRANT_COLUMNS} FROM authz_grants WHERE id = $1"
_INSERT_GRANT = f"""
INSERT INTO authz_grants (id, client_id, user_id, school_id, scope, resource, auth_time, created_at)
VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7), to_timestamp($8))
RETURNING {_GRANT_COLUMNS}
"""
_REVOKE_GRANT = """
UPDATE authz_grants SET revoked_at = now(), revoke_reason = $2
WHERE id = $1 AND revoked_at IS NULL
"""
_INSERT_CODE = """
INSERT INTO authz_codes (code_hash, grant_id, redirect_uri, code_challenge, nonce, expires_at)
VALUES ($1, $2, $3, $4, $5, to_timestamp($6))
"""
_GET_CODE = """
SELECT g.id::text AS grant_id, g.client_id, g.user_id::text, g.school_id::text, c.redirect_uri,
       c.code_challenge, g.scope, g.resource, c.nonce,
       extract(epoch FROM g.auth_time)::bigint AS auth_time,
       extract(epoch FROM c.expires_at)::bigint AS expires_at,
       c.consumed_at IS NOT NULL AS consumed
FROM authz_codes c JOIN authz_grants g ON g.id = c.grant_id
WHERE c.code_hash = $1
"""
_CONSUME_CODE = """
UPDATE authz_codes SET consumed_at = now()
WHERE code_hash = $1 AND consumed_at IS NULL
RETURNING grant_id
"""
_INSERT_REFRESH = """
INSERT INTO authz_refresh_tokens (token_hash, grant_id, scope, resource, created_at)
VALUES ($1, $2, $3, $4, to_timestamp($5))
"""


class PgGrantStore:
    """Implements the `GrantStore` and `CodeStore` ports."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, grant_id: str) -> Grant | None:
        row = await self._pool.fetchrow(_GET_GRANT, uuid.UUID(grant_id))
        return Grant(**dict(row)) if row else None

    async def create_with_code(
        self, *, client_id: str, user_id: str, school_id: str, scope: str, resource: str,
        auth_time: int, code: str, redirect_uri: str, code_challenge: str, nonce: str | None,
        code_expires_at: int, now: int,
    ) -> Grant:
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                _INSERT_GRANT, uuid.uuid4(), client_id, uuid.UUID(user_id), uuid.UUID(school_id),
                scope, resource, auth_time, now,
            )
            await conn.execute(
                _INSERT_CODE, digest(code), uuid.UUID(row["id"]), redirect_uri, code_challenge, nonce,
                code_expires_at,
            )
        return Grant(**dict(row))

    async def revoke(self, grant_id: str, *, reason: str) -> None:
        await self._pool.execute(_REVOKE_GRANT, uuid.UUID(grant_id), reason)

    async def redeem_code(
        self, *, code: str, refresh_token: str | None, scope: str, resource: str, now: int
    ) -> bool:
        async with self._pool.acquire() as conn, conn.transaction():
            grant_id = await conn.fetchval(_CONSUME_CODE, digest(code))
            if grant_id is None:
                return False
            if refresh_token is not None:
                await conn.execute(_INSERT_REFRESH, digest(refresh_token), grant_id, scope, resource, now)
        return True


class PgCodeStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, code: str) -> AuthorizationCode | None:
        row = await self._pool.fetchrow(_GET_CODE, digest(code))
        return AuthorizationCode(**dict(row)) if row else None
