"""One connection for a run of statements (`common.db.held`): the statements a task runs
on the pool inside the block share one checkout; a task it starts checks out its own; a
transaction inside is the block's own; the connection is checked out at the first
statement and given back when the block ends, by an error too. The token endpoint
runs each grant this way, and revocation its lookup and revocation: one checkout each,
however many statements they take."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest

from courseschool.common.db import Pool, create_pool, held

from .flow import Flow, Lifecycle

PID = "SELECT pg_backend_pid()"


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[Pool]:
    made = await create_pool(database_url, min_size=0, max_size=3)
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture
def checkouts() -> Iterator[Counter[asyncio.Task[Any] | None]]:
    """Checkouts from any pool of ours, by the task that made them."""
    counted: Counter[asyncio.Task[Any] | None] = Counter()
    acquire = asyncpg.Pool._acquire

    async def counting(self: asyncpg.Pool, timeout: float | None) -> Any:
        counted[asyncio.current_task()] += 1
        return await acquire(self, timeout)

    asyncpg.Pool._acquire = counting  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        asyncpg.Pool._acquire = acquire  # type: ignore[method-assign]


async def test_the_statements_of_a_block_share_one_checkout(pool: Pool, checkouts: Counter[Any]) -> None:
    async with held(pool):
        pids = {await pool.fetchval(PID), await pool.fetchval(PID)}
        async with pool.acquire() as connection:  # a store's own acquire: the same connection
            pids.add(await connection.fetchval(PID))
        assert pool.get_idle_size() == pool.get_size() - 1  # one connection out, and only one
    assert len(pids) == 1
    assert checkouts[asyncio.current_task()] == 1
    assert pool.get_idle_size() == pool.get_size()  # given back when the block ends
    await pool.fetchval(PID)
    assert checkouts[asyncio.current_task()] == 2  # outside a block: a checkout per statement again


async def test_a_block_that_runs_no_statement_checks_nothing_out(pool: Pool, checkouts: Counter[Any]) -> None:
    async with held(pool):
        assert pool.get_idle_size() == pool.get_size()
    assert checkouts[asyncio.current_task()] == 0


async def test_a_block_left_by_an_error_gives_its_connection_back(pool: Pool) -> None:
    with pytest.raises(ZeroDivisionError):
        async with held(pool):
            await pool.execute("BEGIN")  # a transaction left open: the reset rolls it back
            raise ZeroDivisionError
    assert pool.get_idle_size() == pool.get_size()
    async with pool.acquire() as connection:
        assert not connection.is_in_transaction()


async def test_a_nested_block_keeps_the_outer_connection(pool: Pool, checkouts: Counter[Any]) -> None:
    async with held(pool):
        outer = await pool.fetchval(PID)
        async with held(pool):
            assert await pool.fetchval(PID) == outer
        assert await pool.fetchval(PID) == outer
    assert checkouts[asyncio.current_task()] == 1


async def test_a_task_started_inside_checks_out_its_own(pool: Pool, checkouts: Counter[Any]) -> None:
    # Both at once on one connection would fail ("another operation is in progress").
    async with held(pool):
        here = await pool.fetchval(PID)
        child = asyncio.create_task(pool.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.1)"))
        mine = await pool.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.1)")
        theirs = await child
    assert mine == here and theirs != here
    assert checkouts[child] == 1


async def test_a_transaction_inside_is_rolled_back_alone(pool: Pool) -> None:
    async with held(pool):
        await pool.execute("CREATE TEMP TABLE held_rows (n int)")
        await pool.execute("INSERT INTO held_rows VALUES (1)")  # its own commit
        with pytest.raises(ZeroDivisionError):
            async with pool.acquire() as connection, connection.transaction():
                await connection.execute("INSERT INTO held_rows VALUES (2)")
                raise ZeroDivisionError
        assert await pool.fetchval("SELECT array_agg(n) FROM held_rows") == [1]


async def test_a_plain_asyncpg_pool_is_left_as_it_is(database_url: str) -> None:
    plain = await asyncpg.create_pool(database_url, min_size=0, max_size=2)
    try:
        async with held(plain):
            assert await plain.fetchval("SELECT 1") == 1
            assert plain.get_idle_size() == plain.get_size()  # nothing was taken for the block
    finally:
        await plain.close()


async def test_a_code_exchange_a_refresh_and_a_revocation_check_out_once(flow: Flow, checkouts: Counter[Any]) -> None:
    reg = await flow.register()
    user = await flow.user()
    callback, verifier, _ = await flow.authorize(reg, user)
    # The in-process client runs the app in this task: its checkouts are counted here.
    checkouts.clear()
    exchanged = await flow.exchange(reg, callback["code"], verifier)
    assert exchanged.status_code == 200, exchanged.text
    assert checkouts[asyncio.current_task()] == 1
    checkouts.clear()
    refreshed = await Lifecycle(flow).refresh(reg, exchanged.json()["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    assert checkouts[asyncio.current_task()] == 1
    checkouts.clear()
    revoked = await Lifecycle(flow).revoke(reg, refreshed.json()["refresh_token"])
    assert revoked.status_code == 200, revoked.text
    assert checkouts[asyncio.current_task()] == 1
