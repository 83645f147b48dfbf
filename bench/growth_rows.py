"""The rows the growth section adds to the platform's own tables: live grants, each with a
live refresh token, and revoked access tokens (a tenth as many), bulk-inserted with
generate_series; and the blocks PostgreSQL found in its shared_buffers or read from
outside them."""

from __future__ import annotations

import asyncio

import asyncpg

_GRANTS = """
INSERT INTO authz_grants (id, client_id, user_id, school_id, scope, resource, auth_time, created_at)
SELECT md5('bench-growth-' || i)::uuid, $1, $2::uuid, $3::uuid, 'openid courses:read', $4, now(), now()
FROM generate_series($5::bigint, $6::bigint) AS i
"""
_REFRESH_TOKENS = """
INSERT INTO authz_refresh_tokens (token_hash, grant_id, scope, resource, created_at)
SELECT sha256(convert_to('bench-growth-rt-' || i, 'UTF8')), md5('bench-growth-' || i)::uuid,
       'openid courses:read', $1, now()
FROM generate_series($2::bigint, $3::bigint) AS i
"""
_REVOKED = """
INSERT INTO authz_revoked_access_tokens (jti, grant_id, expires_at, revoked_at)
SELECT 'bench-growth-' || i, md5('bench-growth-' || i)::uuid, now() + interval '1 day', now()
FROM generate_series($1::bigint, $2::bigint) AS i
"""
CHUNK = 200_000
_BLOCKS = """
SELECT coalesce(sum(heap_blks_hit + coalesce(idx_blks_hit, 0)), 0)::bigint,
       coalesce(sum(heap_blks_read + coalesce(idx_blks_read, 0)), 0)::bigint
FROM pg_statio_user_tables
"""


async def blocks(dsn: str) -> tuple[int, int, str]:
    """Table and index blocks found in shared_buffers and read from outside them (the OS
    page cache or the disk), over the database's tables, as PostgreSQL counts them; and
    the size of shared_buffers."""
    await asyncio.sleep(2)  # idle backends report their counts within about a second
    conn = await asyncpg.connect(dsn)
    try:
        hit, read = await conn.fetchrow(_BLOCKS)
        buffers = await conn.fetchval("SHOW shared_buffers")
    finally:
        await conn.close()
    return hit, read, buffers


async def grow(dsn: str, client_id: str, resource: str, email: str, start: int, stop: int) -> None:
    """Rows start+1..stop of grants and refresh tokens, and a tenth as many revoked access tokens."""
    conn = await asyncpg.connect(dsn)
    try:
        user_id, school_id = await conn.fetchrow(
            "SELECT id::text, school_id::text FROM authz_users WHERE email = $1", email
        )
        for first in range(start + 1, stop + 1, CHUNK):
            last = min(first + CHUNK - 1, stop)
            async with conn.transaction():
                await conn.execute(_GRANTS, client_id, user_id, school_id, resource, first, last)
                await conn.execute(_REFRESH_TOKENS, resource, first, last)
        if stop // 10 > start // 10:
            await conn.execute(_REVOKED, start // 10 + 1, stop // 10)
        # What autovacuum would do soon after such an insert, done now so that it does not
        # run during the measurement; the checkpoint writes the new pages out first, for
        # the same reason.
        await conn.execute("VACUUM (ANALYZE) authz_grants, authz_refresh_tokens, authz_revoked_access_tokens")
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()
