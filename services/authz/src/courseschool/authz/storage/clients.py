"""Clients, in `authz_clients`."""

from __future__ import annotations

import asyncpg

from courseschool.common.row_cache import RowCache
from courseschool.common.secrets import digest

from ..protocol.models import Client
from ..protocol.registration import ClientMetadata

_COLUMNS = """client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, scope, id_token_signed_response_alg, secret_hash,
    is_integration, extract(epoch FROM created_at)::bigint AS client_id_issued_at,
    disabled_at IS NOT NULL AS disabled, verified_origin, dpop_bound_access_tokens, client_uri, policy_uri, tos_uri"""

_GET = f"SELECT {_COLUMNS} FROM authz_clients WHERE client_id = $1"
_INSERT = f"""
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method,
    grant_types, response_types, application_type, scope, id_token_signed_response_alg,
    secret_hash, is_integration, created_at, dpop_bound_access_tokens, registration_token_hash,
    client_uri, policy_uri, tos_uri)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, to_timestamp($12), $13, $14, $15, $16, $17)
RETURNING {_COLUMNS}
"""

# RFC 7592: the registration access token's hash of a live self-registered client.
_REGISTRATION_TOKEN = """
SELECT registration_token_hash FROM authz_clients
WHERE client_id = $1 AND disabled_at IS NULL AND NOT is_integration
"""

# RFC 7592 §2.2: the client replaces its metadata (the method may move between the two
# confidential ones only: the secret stays).
_UPDATE = f"""
UPDATE authz_clients SET client_name = $2, redirect_uris = $3, token_endpoint_auth_method = $4, grant_types = $5,
    response_types = $6, application_type = $7, scope = $8, id_token_signed_response_alg = $9,
    dpop_bound_access_tokens = $10, client_uri = $11, policy_uri = $12, tos_uri = $13
WHERE client_id = $1 AND disabled_at IS NULL AND NOT is_integration
RETURNING {_COLUMNS}
"""

_INTEGRATION_NAMES = "SELECT client_name FROM authz_clients WHERE is_integration AND client_name IS NOT NULL"

_UPSERT_DOCUMENT_CLIENT = f"""
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, id_token_signed_response_alg, verified_origin, client_uri, policy_uri, tos_uri,
    created_at)
VALUES ($1, $2, $3, 'none', $4, $5, $6, $7, $8, $9, $10, $11, to_timestamp($12))
ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris,
    grant_types = EXCLUDED.grant_types, id_token_signed_response_alg = EXCLUDED.id_token_signed_response_alg,
    verified_origin = EXCLUDED.verified_origin, client_uri = EXCLUDED.client_uri, policy_uri = EXCLUDED.policy_uri,
    tos_uri = EXCLUDED.tos_uri
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


def storable(client_id: str) -> bool:
    """PostgreSQL's text holds no NUL (a query with one fails): such an id names no
    client, whoever sent it (a path, a Basic header)."""
    return "\x00" not in client_id


def _row(row: asyncpg.Record) -> Client:
    return Client(**dict(row))


# Every change of a row is announced on this channel (migration 0011's trigger).
CHANGES = "authz_clients"


class PgClientStore:
    """Clients by id, each kept in memory once read when a `RowCache` on `CHANGES` is
    given (every token request authenticates its client: a round trip saved each)."""

    def __init__(self, pool: asyncpg.Pool, cache: RowCache[Client] | None = None) -> None:
        self._pool = pool
        self._cache = cache

    async def get(self, client_id: str) -> Client | None:
        if not storable(client_id):
            return None
        if self._cache is None:
            return await self._read(client_id)
        return await self._cache.get(client_id, self._read)

    async def _read(self, client_id: str) -> Client | None:
        row = await self._pool.fetchrow(_GET, client_id)
        return _row(row) if row else None

    def changed(self, client_id: str) -> None:
        """A row this process wrote (here or in the admin store): its copy goes now."""
        if self._cache is not None:
            self._cache.forget(client_id)

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
            client.client_uri,
            client.policy_uri,
            client.tos_uri,
            client.client_id_issued_at,  # the application's time the document was read (first insert only)
        )
        self.changed(client.client_id)
        return _row(row) if row else None

    async def ensure_service_client(self, *, client_id: str, secret: str, name: str) -> None:
        """Register (or re-key) a resource server's introspection client; idempotent."""
        await self._pool.execute(_UPSERT_SERVICE_CLIENT, client_id, name, digest(secret))
        self.changed(client_id)

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
        registration_token_hash: bytes | None = None,
        links: tuple[str | None, str | None, str | None] = (None, None, None),
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
            registration_token_hash,
            *links,
        )
        return _row(row)

    async def registration_token_hash(self, client_id: str) -> bytes | None:
        """RFC 7592: the hash a live self-registered client's configuration requests are
        checked against; None for any other client, or none at all."""
        if not storable(client_id):
            return None
        return await self._pool.fetchval(_REGISTRATION_TOKEN, client_id)

    async def update(self, client_id: str, meta: ClientMetadata) -> Client | None:
        """Replace a self-registered client's metadata (checked by `protocol.registration`)."""
        row = await self._pool.fetchrow(
            _UPDATE,
            client_id,
            meta.client_name,
            meta.redirect_uris or [],
            meta.token_endpoint_auth_method,
            meta.grant_types,
            meta.response_types,
            meta.application_type,
            meta.scope,
            meta.id_token_signed_response_alg,
            meta.dpop_bound_access_tokens,
            meta.client_uri,
            meta.policy_uri,
            meta.tos_uri,
        )
        self.changed(client_id)
        return _row(row) if row else None
