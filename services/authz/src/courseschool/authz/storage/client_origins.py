"""The origins browsers may call the client-facing endpoints from, beyond loopback
(common/cors.py, `CLIENT_ORIGINS`): those of the https redirect URIs registered for
clients that may have them, administrator-made integrations and the clients of metadata
documents on a host an administrator trusts now (protocol/client_id_metadata.py), while
the client is not disabled. One query for the whole set: a preflight names no client."""

from __future__ import annotations

import asyncpg

from courseschool.common.origins import origin_of

_HTTPS_REDIRECT_URIS = """
SELECT DISTINCT uri
FROM authz_clients AS c CROSS JOIN LATERAL unnest(c.redirect_uris) AS uri
WHERE c.disabled_at IS NULL
  AND uri LIKE 'https://%'
  AND (c.is_integration OR c.verified_origin IN (SELECT host FROM authz_trusted_domains))
"""


class PgClientOriginStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def origins(self) -> frozenset[str]:
        rows = await self._pool.fetch(_HTTPS_REDIRECT_URIS)
        return frozenset(filter(None, (origin_of(row["uri"]) for row in rows)))
