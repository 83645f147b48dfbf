"""The demo school of the embedded default (`make run`): a school, its owner, and
content in every area. Not part of any service: only the all-in-one uses it."""

from __future__ import annotations

import asyncpg

from .people import DEMO_NAME, DEMO_SLUG, seed_people
from .school import seed_demo


async def prepare_demo(pool: asyncpg.Pool, *, email: str, password: str) -> None:
    school_id, owner_id = await seed_people(pool, email=email, password=password)
    await seed_demo(pool, school_id=school_id, slug=DEMO_SLUG, name=DEMO_NAME, owner_id=owner_id)


__all__ = ["prepare_demo", "seed_demo", "seed_people"]
