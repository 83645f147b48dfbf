"""What a person holds, for their connected-apps page (`endpoints/connected_apps.py`):
their grants that still hold access, one of them, and their live grants of one app."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

# A user's grants that still hold access (the connected-apps page): not revoked, and
# an access token may still live ($5: its lifetime), or a refresh token is usable
# (unused, younger than the idle lifetime $3, the grant younger than the absolute $4).
# An approval whose code was never exchanged holds nothing and is left out. Most
# recently used first.
_HELD_COLUMNS = """g.id::text, g.client_id, g.scope, extract(epoch FROM g.created_at)::bigint AS created_at,
       extract(epoch FROM g.first_approved_at)::bigint AS first_approved_at,
       extract(epoch FROM g.last_used_at)::bigint AS last_used_at, g.created_from, g.created_agent,
       c.client_name, c.is_integration, c.verified_origin, c.redirect_uris"""
_HELD_BY = f"""
SELECT {_HELD_COLUMNS}
FROM authz_grants g JOIN authz_clients c ON c.client_id = g.client_id
WHERE g.user_id = $1 AND g.revoked_at IS NULL
  AND (g.last_used_at > to_timestamp($2::bigint - $5::bigint)
       OR (g.created_at >= to_timestamp($2::bigint - $4::bigint) AND EXISTS (
           SELECT 1 FROM authz_refresh_tokens rt
           WHERE rt.grant_id = g.id AND rt.consumed_at IS NULL
             AND rt.created_at >= to_timestamp($2::bigint - $3::bigint))))
ORDER BY g.last_used_at DESC NULLS LAST, g.created_at DESC, g.id
"""
# One grant of a user, live or not (a confirmation page, the notice after an ending).
_ONE_OF_USER = f"""
SELECT {_HELD_COLUMNS}, g.revoked_at IS NOT NULL AS revoked
FROM authz_grants g JOIN authz_clients c ON c.client_id = g.client_id
WHERE g.id = $1 AND g.user_id = $2
"""
# The user's live grants of one client (removing an app everywhere), listed or not.
_LIVE_OF_USER_AND_CLIENT = """
SELECT id::text FROM authz_grants WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL ORDER BY id
"""


# The apps whose access the person's school ended or blocked ($2 - $3: the retention of
# revoked grants), the last ending of each.
_ENDED_BY_SCHOOL = """
SELECT DISTINCT ON (g.client_id) g.client_id, c.client_name, g.revoke_reason AS reason,
       extract(epoch FROM g.revoked_at)::bigint AS ended_at
FROM authz_grants g JOIN authz_clients c ON c.client_id = g.client_id
WHERE g.user_id = $1 AND g.revoke_reason IN ('revoked_by_school', 'school_blocked')
  AND g.revoked_at > to_timestamp($2::bigint - $3::bigint)
ORDER BY g.client_id, g.revoked_at DESC
"""


class EndedBySchool(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    client_name: str | None
    reason: str  # "revoked_by_school" (access ended) or "school_blocked" (the app blocked)
    ended_at: int


class HeldGrant(msgspec.Struct, frozen=True, kw_only=True):
    """A grant its user holds, with what the connected-apps page says about its client."""

    id: str
    client_id: str
    scope: str
    created_at: int
    first_approved_at: int | None  # a step-up: when the sign-in it continues was first approved
    last_used_at: int | None  # the last code exchange or refresh; None: not yet
    created_from: str | None  # the address it was approved from; None: before this was recorded
    created_agent: str | None  # the browser it was approved in ("Firefox on Linux"); None: unknown
    client_name: str | None
    is_integration: bool
    verified_origin: str | None
    redirect_uris: list[str]


class PgConnectedAppStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def held_by(
        self, user_id: str, *, now: int, refresh_idle_ttl: int, refresh_absolute_ttl: int, access_token_ttl: int
    ) -> list[HeldGrant]:
        rows = await self._pool.fetch(
            _HELD_BY, uuid.UUID(user_id), now, refresh_idle_ttl, refresh_absolute_ttl, access_token_ttl
        )
        return [HeldGrant(**dict(r)) for r in rows]

    async def ended_by_school(self, user_id: str, *, now: int, retention: int) -> list[EndedBySchool]:
        rows = await self._pool.fetch(_ENDED_BY_SCHOOL, uuid.UUID(user_id), now, retention)
        return sorted((EndedBySchool(**dict(r)) for r in rows), key=lambda e: -e.ended_at)

    async def one_of_user(self, grant_id: str, user_id: str) -> tuple[HeldGrant, bool] | None:
        """One of the user's grants, and whether it has ended; None for anything else
        (another user's grant, an unknown or malformed id)."""
        try:
            gid = uuid.UUID(grant_id)
        except ValueError:
            return None
        row = await self._pool.fetchrow(_ONE_OF_USER, gid, uuid.UUID(user_id))
        if row is None:
            return None
        fields = dict(row)
        revoked = fields.pop("revoked")
        return HeldGrant(**fields), revoked

    async def live_of_user_and_client(self, user_id: str, client_id: str) -> list[str]:
        return [r["id"] for r in await self._pool.fetch(_LIVE_OF_USER_AND_CLIENT, uuid.UUID(user_id), client_id)]
