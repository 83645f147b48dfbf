"""Trusted domains, in `authz_trusted_domains`: hosts whose Client ID Metadata
Documents may list https callbacks on themselves (an administrator's decision)."""

from __future__ import annotations

from typing import Any

import asyncpg

_IS_TRUSTED = "SELECT EXISTS (SELECT 1 FROM authz_trusted_domains WHERE host = $1)"
_LIST = "SELECT host, created_by, created_at FROM authz_trusted_domains ORDER BY host"
_ADD = """
INSERT INTO authz_trusted_domains (host, created_by) VALUES ($1, $2)
ON CONFLICT (host) DO UPDATE SET host = EXCLUDED.host
RETURNING host, created_by, created_at
"""
_REMOVE = "DELETE FROM authz_trusted_domains WHERE host = $1"


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    return {"host": row["host"], "created_by": row["created_by"], "created_at": row["created_at"].isoformat()}


class PgTrustedDomainStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def is_trusted(self, host: str) -> bool:
        return bool(await self._pool.fetchval(_IS_TRUSTED, host))

    async def list(self) -> list[dict[str, Any]]:
        return [_plain(r) for r in await self._pool.fetch(_LIST)]

    async def add(self, host: str, *, created_by: str) -> dict[str, Any]:
        """Trust `host` (already normalised); trusting it again changes nothing."""
        return _plain(await self._pool.fetchrow(_ADD, host, created_by))

    async def remove(self, host: str) -> bool:
        return (await self._pool.execute(_REMOVE, host)).endswith(" 1")
