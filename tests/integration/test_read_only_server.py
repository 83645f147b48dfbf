"""A server that stopped taking writes (a primary demoted or fenced during a failover, a
standby reached): the write fails with asyncpg's ReadOnlySQLTransactionError, and the pool
drops every connection it holds, so the next checkouts connect anew (through the DSN's
host list, to the new primary: tests/faults/test_postgres_failover.py runs that with a real
standby). Here one pooled connection is made read-only by a session setting, which the
pool keeps on it as a server's read-only state would stay: a checkout of its own, a
statement of the pool's, a `held` block alike."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from courseschool.common.db import Pool, create_pool, held

PID = "SELECT pg_backend_pid()"
WRITE = "CREATE TEMP TABLE written (n int)"  # a write every fresh session may make once


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[Pool]:
    made = await create_pool(database_url, min_size=0, max_size=3)
    try:
        yield made
    finally:
        await made.close()


async def _turn_read_only(pool: Pool) -> set[int]:
    """Every connection of the pool (three, open) read-only; their backends' ids."""
    connections = [await pool.acquire() for _ in range(3)]
    try:
        for connection in connections:
            await connection.execute("SET SESSION default_transaction_read_only = on")
        return {await connection.fetchval(PID) for connection in connections}
    finally:
        for connection in connections:
            await pool.release(connection)


async def _through_a_checkout(pool: Pool) -> None:
    async with pool.acquire() as connection:
        await connection.execute(WRITE)


async def _through_the_pool(pool: Pool) -> None:
    await pool.execute(WRITE)


async def _in_a_held_block(pool: Pool) -> None:
    async with held(pool):
        await pool.fetchval(PID)
        async with pool.acquire() as connection, connection.transaction():
            await connection.execute(WRITE)


@pytest.mark.parametrize("write", [_through_a_checkout, _through_the_pool, _in_a_held_block])
async def test_a_write_refused_as_read_only_drops_the_pools_connections(
    pool: Pool, write: Callable[[Pool], Awaitable[None]]
) -> None:
    read_only = await _turn_read_only(pool)
    with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
        await write(pool)
    # None of the read-only connections is handed out again: the next write succeeds on a
    # new one, and so does every checkout after it.
    await write(pool)
    async with pool.acquire() as a, pool.acquire() as b, pool.acquire() as c:
        fresh = {await a.fetchval(PID), await b.fetchval(PID), await c.fetchval(PID)}
    assert not fresh & read_only, (fresh, read_only)


async def test_other_errors_keep_the_connections(pool: Pool) -> None:
    before = await pool.fetchval(PID)
    with pytest.raises(asyncpg.UndefinedTableError):
        await pool.execute("INSERT INTO no_such_table VALUES (1)")
    assert await pool.fetchval(PID) == before
