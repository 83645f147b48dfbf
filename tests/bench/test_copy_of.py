"""The growth section's small-tables twin: a copy of the bench database as it was before
the first insert, made while the servers that used it may still be letting go (PostgreSQL
waits for their backends), and dropped afterwards."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import asyncpg
import pytest

from bench.stack import copy_of
from tests.support.infra import temporary_database


@pytest.fixture
async def source(postgres_admin_url: str):
    async with temporary_database(postgres_admin_url) as url:
        conn = await asyncpg.connect(url)
        await conn.execute("CREATE TABLE rows (n int); INSERT INTO rows VALUES (1), (2)")
        await conn.close()
        yield url


def _name(url: str) -> str:
    """The database a URL names (its path; an embedded server's URL also has a query)."""
    return urlsplit(url).path.lstrip("/")


async def _databases(admin_url: str) -> set[str]:
    conn = await asyncpg.connect(admin_url)
    try:
        return {r["datname"] for r in await conn.fetch("SELECT datname FROM pg_database")}
    finally:
        await conn.close()


async def test_the_copy_waits_for_the_source_to_be_free_holds_its_rows_and_goes_after(
    postgres_admin_url: str, source: str
) -> None:
    lingering = await asyncpg.connect(source)  # a stopped server's backend, not gone yet

    async def leave() -> None:
        await asyncio.sleep(0.5)
        await lingering.close()

    leaving = asyncio.create_task(leave())
    async with copy_of(source, "small", admin=postgres_admin_url) as copy:
        assert leaving.done()
        conn = await asyncpg.connect(copy)
        try:
            assert await conn.fetchval("SELECT sum(n) FROM rows") == 3
            await conn.execute("INSERT INTO rows VALUES (10)")  # the copy is its own
        finally:
            await conn.close()
        name = _name(copy)
        assert name in await _databases(postgres_admin_url)
    assert name not in await _databases(postgres_admin_url)
    conn = await asyncpg.connect(source)
    try:
        assert await conn.fetchval("SELECT sum(n) FROM rows") == 3
    finally:
        await conn.close()


async def test_a_source_that_stays_in_use_is_refused_and_nothing_is_left(postgres_admin_url: str, source: str) -> None:
    held = await asyncpg.connect(source)  # PostgreSQL waits five seconds for it, then refuses
    try:
        with pytest.raises(asyncpg.ObjectInUseError):
            async with copy_of(source, "small", admin=postgres_admin_url):
                pass
    finally:
        await held.close()
    copies = _name(source) + "_small_"
    assert not [name for name in await _databases(postgres_admin_url) if name.startswith(copies)]
