"""Clients, in `authz_clients`."""

from __future__ import annotations

import asyncpg

from courseschool.common.secrets import digest

from ..protocol.models import Client

_COLUMNS = """client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, scope, id_token_signed_response_alg, secret_hash,
    is_integration, extract(epoch FROM created_at)::bigint AS client_id_issued_at,
    disabled_at IS NOT NULL AS disabled, verified_origin, dpop_bound_access_tokens"""

_GET = f"SELECT {_COLUMNS} FROM authz_clients WHERE client_id = $1"
_INSERT = f"""
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method,
    grant_types, response_types, application_type, scope, id_token_signed_response_alg,
    secret_hash, is_integration, created_at, dpop_bound_access_tokens)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, to_timestamp($12), $13)
RETURNING {_COLUMNS}
"""

_INTEGRATION_NAMES = "SELECT client_name FROM authz_clients WHERE is_integration AND client_name IS NOT NULL"

_UPSERT_DOCUMENT_CLIENT = f"""
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, id_token_signed_response_alg, verified_origin)
VALUES ($1, $2, $3, 'none', $4, $5, $6, $7, $8)
ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris,
    grant_types = EXCLUDED.grant_types, id_token_signed_response_alg = EXCLUDED.id_token_signed_response_alg,
    verified_origin = EXCLUDED.verified_origin
WHERE authz_clients.verified_origin IS NOT NULL
RETURNING {_COLUMNS}
"""


# A resource server's own confidential client: no grant types, it only introspects.
_UPSERT_SERVICE_CLIENT = """
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, secret_hash, is_integration)
VALUES ($1, $2, '{}', 'client_secret_post', '{}', '{}', 'service', $3, true)
ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, disabled_at = NULL
"""


def _row(row: asyncpg.Record) -> Client:
    return Client(**dict(row))


class PgClientStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, client_id: str) -> Client | None:
        row = await self._pool.fetchrow(_GET, client_id)
        return _row(row) if row else None

    async def integration_names(self) -> list[str]:
        """The names of administrator-made clients (disabled ones too): a few rows."""
        return [row["client_name"] for row in await self._pool.fetch(_INTEGRATION_NAMES)]

    async def record_document_client(self, client: Client) -> Client | None:
        """Record (or refresh) a client known by its metadata document; None when the
        URL is the id of a client registered another way, or disabled by an admin."""
        row = await self._pool.fetchrow(
            _UPSERT_DOCUMENT_CLIENT,
            client.client_id,
            client.client_name,
            client.redirect_uris,
            client.grant_types,
            client.response_types,
            client.application_type,
            client.id_token_signed_response_alg,
            client.verified_origin,
        )
        return _row(row) if row else None

    async def ensure_service_client(self, *, client_id: str, secret: str, name: str) -> None:
        """Register (or re-key) a resource server's introspection client; idempotent."""
        await self._pool.execute(_UPSERT_SERVICE_CLIENT, client_id, name, digest(secret))

    async def create(
        self,
        *,
        client_id: str,
        client_name: str | None,
        redirect_uris: list[str],
        token_endpoint_auth_method: str,
        grant_types: list[str],
        response_types: list[str],
        application_type: str,
        scope: str | None,
        id_token_signed_response_alg: str,
        secret_hash: bytes | None,
        is_integration: bool,
        now: int,
        dpop_bound_access_tokens: bool = False,
    ) -> Client:
        row = await self._pool.fetchrow(
            _INSERT,
            client_id,
            client_name,
            redirect_uris,
            token_endpoint_auth_method,
            grant_types,
            response_types,
            application_type,
            scope,
            id_token_signed_response_alg,
            secret_hash,
            is_integration,
            now,
            dpop_bound_access_tokens,
        )
        return _row(row)
