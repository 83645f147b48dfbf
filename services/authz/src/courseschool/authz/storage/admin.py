"""The administrator's queries: schools, users, clients, grants. Plain SQL; the rows
come back as dicts ready to print or to send as JSON."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from courseschool.common.clock import Clock

from ..protocol.emails import canonical_email
from .clients import PgClientStore

_SCHOOLS = "SELECT id::text, slug, name, created_at FROM authz_schools ORDER BY slug"
_SCHOOL = "SELECT id::text, slug, name, created_at FROM authz_schools WHERE slug = $1 OR id::text = $1"
_CREATE_SCHOOL = (
    "INSERT INTO authz_schools (id, slug, name) VALUES ($1, $2, $3) RETURNING id::text, slug, name, created_at"
)

_USER_COLUMNS = """u.id::text, u.email, u.name, u.preferred_username, u.role, s.slug AS school,
    u.disabled_at IS NOT NULL AS disabled, u.created_at"""
_USERS = f"""
SELECT {_USER_COLUMNS} FROM authz_users u JOIN authz_schools s ON s.id = u.school_id
WHERE ($1::text IS NULL OR s.slug = $1 OR s.id::text = $1) ORDER BY s.slug, u.email
"""
_USER = f"""
SELECT {_USER_COLUMNS} FROM authz_users u JOIN authz_schools s ON s.id = u.school_id
WHERE u.id::text = $1 OR u.email_canonical = $2
"""
_SET_ROLE = "UPDATE authz_users SET role = $2 WHERE id = $1::uuid"
_SET_DISABLED = (
    "UPDATE authz_users SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, to_timestamp($3)) END "
    "WHERE id = $1::uuid"
)
_END_SESSIONS = (
    "UPDATE authz_login_sessions SET ended_at = to_timestamp($2) WHERE user_id = $1::uuid AND ended_at IS NULL"
)

_CLIENT_COLUMNS = """client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types, scope,
    is_integration, verified_origin, disabled_at IS NOT NULL AS disabled, created_at,
    (SELECT count(*) FROM authz_grants g WHERE g.client_id = c.client_id AND g.revoked_at IS NULL) AS live_grants"""
_CLIENTS = f"SELECT {_CLIENT_COLUMNS} FROM authz_clients c ORDER BY created_at"
_CLIENT = f"SELECT {_CLIENT_COLUMNS} FROM authz_clients c WHERE client_id = $1"
_DISABLE_CLIENT = "UPDATE authz_clients SET disabled_at = coalesce(disabled_at, to_timestamp($2)) WHERE client_id = $1"
_DELETE_CLIENT = "DELETE FROM authz_clients WHERE client_id = $1"
_DELETE_UNUSED = """
DELETE FROM authz_clients c
WHERE NOT c.is_integration
  AND (c.verified_origin IS NULL OR c.disabled_at IS NULL)  -- a disabled document client keeps its URL blocked
  AND c.token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')
  AND cardinality(c.grant_types) > 0
  AND c.created_at < to_timestamp($1)
  AND NOT EXISTS (SELECT 1 FROM authz_grants g JOIN authz_codes k ON k.grant_id = g.id
                  WHERE g.client_id = c.client_id AND k.consumed_at IS NOT NULL)
RETURNING client_id
"""

# One row per sign-in (a grant: one approval whose code a computer or browser exchanged),
# with where it was approved (address, browser in a few words) as the connected-apps page shows.
_GRANT_COLUMNS = """g.id::text, g.client_id, c.client_name, g.user_id::text, u.email AS user_email, g.scope,
    g.resource, g.created_at, g.created_from, g.created_agent, g.last_used_at, g.revoked_at, g.revoke_reason"""
_GRANTS = f"""
SELECT {_GRANT_COLUMNS} FROM authz_grants g JOIN authz_users u ON u.id = g.user_id
    LEFT JOIN authz_clients c ON c.client_id = g.client_id
WHERE ($1::text IS NULL OR g.user_id::text = $1 OR u.email_canonical = $4)
  AND ($2::text IS NULL OR g.client_id = $2)
  AND ($3 OR g.revoked_at IS NULL)
ORDER BY g.created_at DESC LIMIT 500
"""
_LIVE_GRANTS_OF_USER = "SELECT id::text, scope FROM authz_grants WHERE user_id = $1::uuid AND revoked_at IS NULL"
_LIVE_GRANTS_OF_CLIENT = "SELECT id::text FROM authz_grants WHERE client_id = $1 AND revoked_at IS NULL"


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in dict(row).items()}


class PgAdminStore:
    def __init__(self, pool: asyncpg.Pool, clients: PgClientStore, clock: Clock) -> None:
        self._pool = pool
        self._clients = clients  # told of the client rows changed here (its cache)
        self._clock = clock  # when a user or client was disabled, a session ended

    async def schools(self) -> list[dict[str, Any]]:
        return [_plain(r) for r in await self._pool.fetch(_SCHOOLS)]

    async def school(self, ref: str) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_SCHOOL, ref)
        return _plain(row) if row else None

    async def create_school(self, slug: str, name: str) -> dict[str, Any]:
        return _plain(await self._pool.fetchrow(_CREATE_SCHOOL, uuid.uuid4(), slug, name))

    async def users(self, school: str | None) -> list[dict[str, Any]]:
        return [_plain(r) for r in await self._pool.fetch(_USERS, school)]

    async def user(self, ref: str) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_USER, ref, canonical_email(ref))
        return _plain(row) if row else None

    async def set_role(self, user_id: str, role: str) -> None:
        await self._pool.execute(_SET_ROLE, user_id, role)

    async def set_disabled(self, user_id: str, disabled: bool) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            now = self._clock.now()
            await conn.execute(_SET_DISABLED, user_id, disabled, now)
            if disabled:
                await conn.execute(_END_SESSIONS, user_id, now)

    async def clients(self) -> list[dict[str, Any]]:
        return [_plain(r) for r in await self._pool.fetch(_CLIENTS)]

    async def client(self, client_id: str) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_CLIENT, client_id)
        return _plain(row) if row else None

    async def disable_client(self, client_id: str) -> None:
        await self._pool.execute(_DISABLE_CLIENT, client_id, self._clock.now())
        self._clients.changed(client_id)

    async def delete_client(self, client_id: str) -> bool:
        deleted = (await self._pool.execute(_DELETE_CLIENT, client_id)).endswith(" 1")
        self._clients.changed(client_id)
        return deleted

    async def delete_unused_clients(self, *, older_than: int) -> list[str]:
        removed = [r["client_id"] for r in await self._pool.fetch(_DELETE_UNUSED, older_than)]
        for client_id in removed:
            self._clients.changed(client_id)
        return removed

    async def grants(self, *, user: str | None, client: str | None, include_revoked: bool) -> list[dict[str, Any]]:
        by_email = canonical_email(user) if user is not None else None
        return [_plain(r) for r in await self._pool.fetch(_GRANTS, user, client, include_revoked, by_email)]

    async def live_grants_of_user(self, user_id: str) -> dict[str, str]:
        """The user's live grants: id -> scope."""
        return {r["id"]: r["scope"] for r in await self._pool.fetch(_LIVE_GRANTS_OF_USER, user_id)}

    async def end_sessions(self, user_id: str) -> None:
        await self._pool.execute(_END_SESSIONS, user_id, self._clock.now())

    async def live_grants_of_client(self, client_id: str) -> list[str]:
        return [r["id"] for r in await self._pool.fetch(_LIVE_GRANTS_OF_CLIENT, client_id)]
