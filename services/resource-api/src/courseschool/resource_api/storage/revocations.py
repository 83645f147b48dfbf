"""The authorization server's record of revocations, read by the revocation feed to
catch up with what its Redis channel may have missed (`common/revocation.py` holds the
statement: the tables are the authorization server's, in the database both share)."""

from __future__ import annotations

import asyncpg

from courseschool.common.revocation import REVOKED_SINCE


class PgRevocationRecord:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def revoked_since(self, moment: int) -> tuple[set[str], set[str]]:
        """The grant ids and token ids revoked after `moment` (the application's clock)."""
        grants: set[str] = set()
        jtis: set[str] = set()
        for row in await self._pool.fetch(REVOKED_SINCE, moment):
            (grants if row["kind"] == "grant" else jtis).add(row["value"])
        return grants, jtis
