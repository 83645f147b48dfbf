"""The demo school and its owner at the authorization server. Idempotent: running it
again keeps the data and makes the printed password true."""

from __future__ import annotations

import uuid

import asyncpg

from courseschool.authz.passwords import hash_password
from courseschool.authz.storage.users import PgUserStore

DEMO_SCHOOL_ID = uuid.UUID("5c4f0f3e-2d7a-4a57-9d1e-6f1c0de5c001")
DEMO_SLUG = "demo"
DEMO_NAME = "Demo Course School"


async def seed_people(pool: asyncpg.Pool, *, email: str, password: str) -> tuple[str, str]:
    """Returns (school id, owner id)."""
    users = PgUserStore(pool)
    school_id = await users.upsert_school(slug=DEMO_SLUG, name=DEMO_NAME, school_id=DEMO_SCHOOL_ID)
    found = await users.get_for_login(email)
    if found is None:
        owner = await users.create(
            school_id=school_id,
            email=email,
            name="Demo Owner",
            preferred_username="demo-owner",
            role="owner",
            password_hash=hash_password(password),
        )
        return school_id, owner.id
    await users.set_password_hash(found[0].id, hash_password(password))
    return school_id, found[0].id
