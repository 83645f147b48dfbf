"""The demo school and its owner, for the embedded default. Idempotent: running it
again keeps the data and makes the printed password true."""

from __future__ import annotations

import uuid

import asyncpg

from courseschool.common.secrets import digest

from .passwords import hash_password
from .storage.users import PgUserStore

DEMO_SCHOOL_ID = uuid.UUID("5c4f0f3e-2d7a-4a57-9d1e-6f1c0de5c001")


async def seed_demo(pool: asyncpg.Pool, *, email: str, password: str) -> tuple[str, str]:
    """Returns (school id, owner id)."""
    users = PgUserStore(pool)
    school_id = await users.upsert_school(slug="demo", name="Demo Course School", school_id=DEMO_SCHOOL_ID)
    found = await users.get_for_login(email)
    if found is None:
        owner = await users.create(
            school_id=school_id, email=email, name="Demo Owner", preferred_username="demo-owner", role="owner",
            password_hash=hash_password(password),
        )
        return school_id, owner.id
    await users.set_password_hash(found[0].id, hash_password(password))
    return school_id, found[0].id


_UPSERT_SERVICE_CLIENT = """
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type, secret_hash, is_integration)
VALUES ($1, $2, '{}', 'client_secret_post', '{}', '{}', 'service', $3, true)
ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, disabled_at = NULL
"""


async def ensure_service_client(pool: asyncpg.Pool, *, client_id: str, secret: str, name: str) -> None:
    """A confidential client with no grant types: a resource server that introspects."""
    await pool.execute(_UPSERT_SERVICE_CLIENT, client_id, name, digest(secret))
