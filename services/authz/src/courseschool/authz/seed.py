"""The demo school and its owner, for the embedded default. Idempotent: running it
again keeps the data and makes the printed password true."""

from __future__ import annotations

import uuid

import asyncpg

from .passwords import hash_password
from .storage.users import PgUserStore

DEMO_SCHOOL_ID = uuid.UUID("5c4f0f3e-2d7a-4a57-9d1e-6f1c0de5c001")


async def seed_demo(pool: asyncpg.Pool, *, email: str, password: str) -> None:
    users = PgUserStore(pool)
    school_id = await users.upsert_school(slug="demo", name="Demo Course School", school_id=DEMO_SCHOOL_ID)
    found = await users.get_for_login(email)
    if found is None:
        await users.create(
            school_id=school_id, email=email, name="Demo Owner", preferred_username="demo-owner", role="owner",
            password_hash=hash_password(password),
        )
    else:
        await users.set_password_hash(found[0].id, hash_password(password))
