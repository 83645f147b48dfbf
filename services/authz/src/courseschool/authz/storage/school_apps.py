"""What a school's owners and admins see and do about the apps its people connected
(`endpoints/school_apps.py`): the live grants of everyone at the school, by app, and
the apps the school blocked (`authz_school_block_keys`)."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from .school_policy import PgSchoolPolicyStore


class SchoolGrant(msgspec.Struct, frozen=True, kw_only=True):
    grant_id: str
    client_id: str
    client_name: str | None
    is_integration: bool
    verified_origin: str | None
    redirect_uris: list[str]
    user_id: str
    user_name: str
    user_email: str
    user_role: str
    scope: str
    approved_at: int
    last_used_at: int | None


# Live grants of the school whose code was exchanged, most recently used first.
_LIVE_AT_SCHOOL = """
SELECT g.id::text AS grant_id, g.client_id, c.client_name, c.is_integration, c.verified_origin, c.redirect_uris,
       u.id::text AS user_id, u.name AS user_name, u.email AS user_email, u.role AS user_role, g.scope,
       extract(epoch FROM g.created_at)::bigint AS approved_at,
       extract(epoch FROM g.last_used_at)::bigint AS last_used_at
FROM authz_grants g
JOIN authz_clients c ON c.client_id = g.client_id
JOIN authz_users u ON u.id = g.user_id
WHERE g.school_id = $1 AND g.revoked_at IS NULL AND g.last_used_at IS NOT NULL
ORDER BY g.last_used_at DESC, g.id
"""
_LIVE_IDS = """
SELECT g.id::text, u.role FROM authz_grants g JOIN authz_users u ON u.id = g.user_id
WHERE g.school_id = $1 AND g.client_id = $2 AND g.revoked_at IS NULL AND ($3::uuid IS NULL OR g.user_id = $3)
ORDER BY g.id
"""
# All grants of the school not revoked, exchanged or not, with what a block covers their
# client by (`protocol/school_blocks.lookup_keys`): a block ends every grant of the software.
_UNREVOKED_AT_SCHOOL = """
SELECT g.id::text AS grant_id, g.client_id, c.client_name, c.is_integration, c.verified_origin
FROM authz_grants g JOIN authz_clients c ON c.client_id = g.client_id
WHERE g.school_id = $1 AND g.revoked_at IS NULL
"""
_OWNERS_UNREVOKED = """
SELECT g.id::text AS grant_id, g.client_id, c.client_name, c.is_integration, c.verified_origin
FROM authz_grants g JOIN authz_clients c ON c.client_id = g.client_id JOIN authz_users u ON u.id = g.user_id
WHERE g.school_id = $1 AND g.revoked_at IS NULL AND u.role = 'owner'
"""
# Blocks and approvals of one school are serialised by an advisory lock keyed by the
# school: a block takes it alone while it writes its keys, an approval shared while it
# checks them and writes its grant. So an approval either committed before the block
# (and the block, reading after it, ends its grant) or reads the block and makes none.
BLOCK_LOCK = "SELECT pg_advisory_xact_lock{mode}(hashtextextended('school-blocks:' || $1::uuid::text, 0))"
# The block's keys, and its client id in the table the previous release reads
# (`authz_school_blocks`, kept while both releases serve: migration 0021).
_BLOCK = """
WITH previous_release AS (
    INSERT INTO authz_school_blocks (school_id, client_id, blocked_at, blocked_by)
    VALUES ($1, $2, to_timestamp($6), $7) ON CONFLICT (school_id, client_id) DO NOTHING
)
INSERT INTO authz_school_block_keys
    (school_id, client_id, client_name, kind, key, blocked_at, blocked_by, blocked_by_role)
SELECT $1, $2, $3, k.kind, k.key, to_timestamp($6), $7, $8 FROM unnest($4::text[], $5::text[]) AS k (kind, key)
ON CONFLICT (school_id, key) DO NOTHING
"""
_BLOCKED_BY_WHOM = (
    "SELECT DISTINCT blocked_by_role FROM authz_school_block_keys WHERE school_id = $1 AND client_id = $2"
)
_UNBLOCK = """
WITH previous_release AS (DELETE FROM authz_school_blocks WHERE school_id = $1 AND client_id = $2)
DELETE FROM authz_school_block_keys WHERE school_id = $1 AND client_id = $2
"""
# The check where a grant is made and where a token is issued: the primary key's index.
BLOCKED = """
SELECT client_id, client_name, kind, extract(epoch FROM blocked_at)::bigint AS blocked_at
FROM authz_school_block_keys WHERE school_id = $1 AND key = ANY($2::text[])
ORDER BY blocked_at LIMIT 1
"""
_BLOCKED_AT_SCHOOL = """
SELECT DISTINCT ON (client_id) client_id, client_name, extract(epoch FROM blocked_at)::bigint AS blocked_at,
       blocked_by_role
FROM authz_school_block_keys WHERE school_id = $1 ORDER BY client_id, blocked_at
"""


class BlockedAtSchool(Exception):
    """An approval found its client blocked at the person's school: no grant was made."""


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """The block that covers a client at a school: the app the school blocked (which may
    be another registration of the same software) and by what."""

    client_id: str
    client_name: str | None
    kind: str  # "client", "origin" or "name": what of the client it covered
    blocked_at: int


class Unrevoked(msgspec.Struct, frozen=True, kw_only=True):
    grant_id: str
    client_id: str
    client_name: str | None
    is_integration: bool
    verified_origin: str | None


class BlockedApp(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    client_name: str | None
    blocked_at: int
    blocked_by_role: str | None  # "owner": only an owner may lift it


class PgSchoolAppStore(PgSchoolPolicyStore):
    """What a school's owners and admins decide about apps: its blocks (here), its
    policy and the apps it approved (`PgSchoolPolicyStore`)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self._pool = pool

    async def live_grants(self, school_id: str) -> list[SchoolGrant]:
        rows = await self._pool.fetch(_LIVE_AT_SCHOOL, uuid.UUID(school_id))
        return [SchoolGrant(**dict(r)) for r in rows]

    async def live_grant_ids(self, school_id: str, client_id: str, user_id: str | None = None) -> list[tuple[str, str]]:
        """The live grants of one app at the school (of one person there, when named),
        each with its person's role."""
        person = uuid.UUID(user_id) if user_id else None
        rows = await self._pool.fetch(_LIVE_IDS, uuid.UUID(school_id), client_id, person)
        return [(r["id"], r["role"]) for r in rows]

    async def block(
        self,
        school_id: str,
        client_id: str,
        *,
        client_name: str | None,
        keys: list[tuple[str, str]],
        by: str,
        by_role: str,
        now: int,
    ) -> list[Unrevoked]:
        """Block the app for the school under `keys` (kind, key), then read every grant
        of the school not revoked (the caller ends those the block covers). The block is
        committed, under the school's lock, before the grants are read: an approval that
        raced it either is among them or saw the block."""
        school = uuid.UUID(school_id)
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute(BLOCK_LOCK.format(mode=""), school)
                await conn.execute(
                    _BLOCK,
                    school,
                    client_id,
                    client_name,
                    [kind for kind, _ in keys],
                    [key for _, key in keys],
                    now,
                    uuid.UUID(by),
                    by_role,
                )
            rows = await conn.fetch(_UNREVOKED_AT_SCHOOL, school)
        return [Unrevoked(**dict(r)) for r in rows]

    async def owners_unrevoked(self, school_id: str) -> list[Unrevoked]:
        """The grants the school's owners hold, not revoked (what an admin's block may not end)."""
        return [Unrevoked(**dict(r)) for r in await self._pool.fetch(_OWNERS_UNREVOKED, uuid.UUID(school_id))]

    async def blocked_by(self, school_id: str, client_id: str) -> set[str]:
        """The roles of those who blocked the app (empty: it is not blocked)."""
        rows = await self._pool.fetch(_BLOCKED_BY_WHOM, uuid.UUID(school_id), client_id)
        return {r["blocked_by_role"] or "" for r in rows}

    async def unblock(self, school_id: str, client_id: str) -> bool:
        return not (await self._pool.execute(_UNBLOCK, uuid.UUID(school_id), client_id)).endswith(" 0")

    async def blocked(self, school_id: str, keys: list[str]) -> Block | None:
        """The block that covers a client with these keys (`school_blocks.lookup_keys`) at the school."""
        row = await self._pool.fetchrow(BLOCKED, uuid.UUID(school_id), keys)
        return Block(**dict(row)) if row else None

    async def blocked_apps(self, school_id: str) -> list[BlockedApp]:
        rows = await self._pool.fetch(_BLOCKED_AT_SCHOOL, uuid.UUID(school_id))
        return sorted((BlockedApp(**dict(r)) for r in rows), key=lambda b: -b.blocked_at)
