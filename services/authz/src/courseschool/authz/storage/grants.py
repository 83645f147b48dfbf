"""Grants, and the authorization codes and refresh tokens they issue: made, redeemed,
rotated (the `GrantStore` port). Reading a code is `codes.py`; what a person holds, for
the connected-apps page, `connected_apps.py`.

Only digests of codes and refresh tokens are stored. A code is consumed atomically
(`UPDATE ... WHERE consumed_at IS NULL RETURNING`), in the same statement that
records the refresh token its redemption issues, so no half-written grant exists
(`code_redemption.py`, with the sign-ins a redemption ends).
"""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from courseschool.common.secrets import digest

from ..protocol.models import AccessTokenHolder, EndedGrant, Grant, RefreshToken
from ..protocol.ports import Rotation
from .code_redemption import REDEEM_CODE
from .school_apps import BLOCK_LOCK, BLOCKED, BlockedAtSchool
from .users import user_columns, user_from


def grant_columns(table: str = "") -> str:
    """The select list a `Grant` is read from (`table` qualifies the columns)."""
    t = f"{table}." if table else ""
    return f"""{t}id::text AS id, {t}client_id, {t}user_id::text AS user_id, {t}school_id::text AS school_id,
    {t}scope, {t}resource, extract(epoch FROM {t}auth_time)::bigint AS auth_time,
    extract(epoch FROM {t}created_at)::bigint AS created_at, {t}revoked_at IS NOT NULL AS revoked, {t}dpop_jkt"""


_GRANT_COLUMNS = grant_columns()


def grant_from(row: asyncpg.Record) -> Grant:
    return Grant(**{name: row[name] for name in Grant.__struct_fields__})


_GET_GRANT = f"SELECT {_GRANT_COLUMNS} FROM authz_grants WHERE id = $1"
# Introspection and UserInfo: the grant, its user and the token's own revocation in one
# round trip (three lookups before).
_GET_HOLDER = f"""
SELECT {grant_columns("g")},
       EXISTS (SELECT 1 FROM authz_revoked_access_tokens r WHERE r.jti = $2) AS token_revoked,
       {user_columns("u", "u_")}
FROM authz_grants g JOIN authz_users u ON u.id = g.user_id
WHERE g.id = $1
"""
_INSERT_GRANT = f"""
INSERT INTO authz_grants (id, client_id, user_id, school_id, scope, resource, auth_time, created_at, created_from,
                          created_agent, session_hash)
VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7), to_timestamp($8), $9, $10, $11)
RETURNING {_GRANT_COLUMNS}
"""
_INSERT_CODE = """
INSERT INTO authz_codes (code_hash, grant_id, redirect_uri, code_challenge, nonce, expires_at, dpop_jkt, created_at)
VALUES ($1, $2, $3, $4, $5, to_timestamp($6), $7, to_timestamp($8))
"""
# What a user has let a client do so far: whether any grant was ever made, the scopes
# of the live ones approved in this browser sign-in ($3: its digest; a step-up there
# goes on with them), and whether live ones were approved elsewhere (another computer
# or browser: a sign-in of its own). Only grants whose code was exchanged hold access.
_ALLOWED_BEFORE = """
SELECT count(*) > 0 AS seen,
       string_agg(scope, ' ') FILTER (WHERE revoked_at IS NULL AND last_used_at IS NOT NULL
                                      AND session_hash = $3) AS here,
       count(*) FILTER (WHERE revoked_at IS NULL AND last_used_at IS NOT NULL
                        AND session_hash IS DISTINCT FROM $3) > 0 AS elsewhere
FROM authz_grants WHERE user_id = $1 AND client_id = $2
"""
# RFC 9449 §5: the first proof a public client sends with a refresh of an unbound grant
# binds it; the key bound (this one, or one bound a moment earlier) is returned.
_BIND_DPOP_KEY = """
UPDATE authz_grants SET dpop_jkt = COALESCE(dpop_jkt, $2) WHERE id = $1 RETURNING dpop_jkt
"""
_GET_REFRESH = f"""
SELECT g.id::text, g.client_id, g.user_id::text, g.school_id::text, g.scope AS grant_scope,
       g.resource AS grant_resource, g.dpop_jkt, extract(epoch FROM g.auth_time)::bigint AS auth_time,
       extract(epoch FROM g.created_at)::bigint AS created_at, g.revoked_at IS NOT NULL AS revoked,
       rt.scope, rt.resource, extract(epoch FROM rt.created_at)::bigint AS rt_created_at,
       extract(epoch FROM rt.consumed_at)::bigint AS consumed_at, rt.replay,
       EXISTS (SELECT 1 FROM authz_refresh_tokens n WHERE n.token_hash = rt.replaced_by AND n.consumed_at IS NULL)
           AS successor_live,
       {user_columns("u", "u_")}
FROM authz_refresh_tokens rt JOIN authz_grants g ON g.id = rt.grant_id JOIN authz_users u ON u.id = g.user_id
WHERE rt.token_hash = $1
"""
# Rotation in one statement. The grant row is locked first (the uncorrelated EXISTS
# below runs `g` before any token row is touched): a revocation's UPDATE of the same
# row waits for the rotation, and the rotation for it, so a revocation that has
# answered leaves no new token behind. Under READ COMMITTED, a concurrent rotation of
# the same token that committed first makes `consumed_at IS NULL` false on re-check:
# only one rotation wins. The grant is marked used only when a token was issued, on
# the row `g` already holds.
_ROTATE_REFRESH = """
WITH g AS (
    SELECT revoked_at IS NOT NULL AS revoked FROM authz_grants WHERE id = $3 FOR UPDATE
), consumed AS (
    UPDATE authz_refresh_tokens SET consumed_at = to_timestamp($5), replaced_by = $2, replay = $4
    WHERE token_hash = $1 AND grant_id = $3 AND consumed_at IS NULL
      AND EXISTS (SELECT 1 FROM g WHERE NOT g.revoked)
    RETURNING scope, resource
), inserted AS (
    INSERT INTO authz_refresh_tokens (token_hash, grant_id, scope, resource, created_at)
    SELECT $2, $3, scope, resource, to_timestamp($5) FROM consumed
    RETURNING 1
), used AS (
    UPDATE authz_grants SET last_used_at = to_timestamp($5) WHERE id = $3 AND EXISTS (SELECT 1 FROM inserted)
)
SELECT (SELECT revoked FROM g) AS revoked, EXISTS (SELECT 1 FROM inserted) AS rotated
"""


class AllowedBefore(msgspec.Struct, frozen=True, kw_only=True):
    seen: bool  # the user approved the client at some time
    here: set[str]  # the scopes live in grants of this browser sign-in (a step-up keeps them)
    elsewhere: bool  # live grants of other computers or browsers: sign-ins of their own


class PgGrantStore:
    """The `GrantStore` port (a code redeemed, a refresh token rotated, a DPoP key
    bound), and the grant queries of the use cases around it: an approval recorded with
    its code, what a user allowed a client before. The `CodeStore` port is
    `storage/codes.PgCodeStore`; the connected-apps page's reads are
    `storage/connected_apps.py`."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, grant_id: str) -> Grant | None:
        try:
            gid = uuid.UUID(grant_id)
        except ValueError:
            return None
        row = await self._pool.fetchrow(_GET_GRANT, gid)
        return grant_from(row) if row else None

    async def access_token_holder(self, grant_id: str, jti: str) -> AccessTokenHolder | None:
        try:
            gid = uuid.UUID(grant_id)
        except ValueError:
            return None
        row = await self._pool.fetchrow(_GET_HOLDER, gid, jti)
        if row is None:
            return None
        return AccessTokenHolder(grant=grant_from(row), user=user_from(row, "u_"), token_revoked=row["token_revoked"])

    async def create_with_code(
        self,
        *,
        client_id: str,
        user_id: str,
        school_id: str,
        scope: str,
        resource: str,
        auth_time: int,
        code: str,
        redirect_uri: str,
        code_challenge: str,
        nonce: str | None,
        code_expires_at: int,
        now: int,
        created_from: str,
        created_agent: str | None = None,
        dpop_jkt: str | None = None,
        session_id: str | None = None,
        block_keys: list[str] | None = None,
    ) -> Grant:
        """The grant an approval makes and its code; `session_id`: the browser sign-in
        it was approved in (only its digest is kept), which a step-up continues.
        `BlockedAtSchool`, and nothing written, when a block of the school covers the client under one of
        `block_keys` (checked under the school's block lock: `storage/school_apps.py`)."""
        async with self._pool.acquire() as conn, conn.transaction():
            if block_keys is not None:
                await conn.execute(BLOCK_LOCK.format(mode="_shared"), uuid.UUID(school_id))
                if await conn.fetchrow(BLOCKED, uuid.UUID(school_id), block_keys) is not None:
                    raise BlockedAtSchool(school_id)
            row = await conn.fetchrow(
                _INSERT_GRANT,
                uuid.uuid4(),
                client_id,
                uuid.UUID(user_id),
                uuid.UUID(school_id),
                scope,
                resource,
                auth_time,
                now,
                created_from,
                created_agent,
                digest(session_id) if session_id else None,
            )
            await conn.execute(
                _INSERT_CODE,
                digest(code),
                uuid.UUID(row["id"]),
                redirect_uri,
                code_challenge,
                nonce,
                code_expires_at,
                dpop_jkt,
                now,
            )
        return grant_from(row)

    async def allowed_before(self, *, user_id: str, client_id: str, session_id: str | None) -> AllowedBefore:
        """What the user allowed the client before, as seen from the browser sign-in
        `session_id` (None: none, so nothing is "here")."""
        row = await self._pool.fetchrow(
            _ALLOWED_BEFORE, uuid.UUID(user_id), client_id, digest(session_id) if session_id else None
        )
        return AllowedBefore(
            seen=bool(row["seen"]), here=set((row["here"] or "").split()), elsewhere=bool(row["elsewhere"])
        )

    async def get_refresh_token(self, token: str) -> RefreshToken | None:
        row = await self._pool.fetchrow(_GET_REFRESH, digest(token))
        if row is None:
            return None
        grant = Grant(
            id=row["id"],
            client_id=row["client_id"],
            user_id=row["user_id"],
            school_id=row["school_id"],
            scope=row["grant_scope"],
            resource=row["grant_resource"],
            auth_time=row["auth_time"],
            created_at=row["created_at"],
            revoked=row["revoked"],
            dpop_jkt=row["dpop_jkt"],
        )
        return RefreshToken(
            grant=grant,
            user=user_from(row, "u_"),
            scope=row["scope"],
            resource=row["resource"],
            created_at=row["rt_created_at"],
            consumed_at=row["consumed_at"],
            replay=row["replay"],
            successor_live=row["successor_live"],
        )

    async def rotate_refresh_token(self, *, old: str, new: str, grant_id: str, replay: bytes, now: int) -> Rotation:
        row = await self._pool.fetchrow(_ROTATE_REFRESH, digest(old), digest(new), uuid.UUID(grant_id), replay, now)
        if row["revoked"] is None or row["revoked"]:
            return Rotation.GRANT_REVOKED
        return Rotation.ROTATED if row["rotated"] else Rotation.ALREADY_USED

    async def redeem_code(
        self,
        *,
        code: str,
        refresh_token: str | None,
        scope: str,
        resource: str,
        now: int,
        grants_per_app: int,
        dpop_jkt: str | None = None,
    ) -> list[EndedGrant] | None:
        new = digest(refresh_token) if refresh_token is not None else None
        row = await self._pool.fetchrow(REDEEM_CODE, digest(code), new, scope, resource, now, dpop_jkt, grants_per_app)
        if not row["consumed"]:
            return None
        return [EndedGrant(grant_id=i, reason=r) for i, r in msgspec.json.decode(row["ended"])]

    async def bind_dpop_key(self, grant_id: str, jkt: str) -> str | None:
        return await self._pool.fetchval(_BIND_DPOP_KEY, uuid.UUID(grant_id), jkt)
