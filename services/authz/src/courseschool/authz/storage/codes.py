"""Authorization codes as the code grant reads them (the `CodeStore` port): the code
with its grant and user, in one round trip. They are made with their grant and redeemed
with its first refresh token (`grants.py`)."""

from __future__ import annotations

import asyncpg

from courseschool.common.secrets import digest

from ..protocol.models import AuthorizationCode
from .grants import grant_columns, grant_from
from .users import user_columns, user_from

_GET_CODE = f"""
SELECT {grant_columns("g")}, c.redirect_uri, c.code_challenge, c.nonce,
       extract(epoch FROM c.expires_at)::bigint AS expires_at,
       c.consumed_at IS NOT NULL AS consumed, c.dpop_jkt AS code_dpop_jkt,
       {user_columns("u", "u_")}
FROM authz_codes c JOIN authz_grants g ON g.id = c.grant_id JOIN authz_users u ON u.id = g.user_id
WHERE c.code_hash = $1
"""


class PgCodeStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, code: str) -> AuthorizationCode | None:
        row = await self._pool.fetchrow(_GET_CODE, digest(code))
        if row is None:
            return None
        return AuthorizationCode(
            grant=grant_from(row),
            user=user_from(row, "u_"),
            redirect_uri=row["redirect_uri"],
            code_challenge=row["code_challenge"],
            nonce=row["nonce"],
            expires_at=row["expires_at"],
            consumed=row["consumed"],
            dpop_jkt=row["code_dpop_jkt"],
        )
