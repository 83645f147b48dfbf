"""The migration runner: forward-only, recorded, safe to run concurrently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from courseschool.common.db import migrate

from ..support.infra import temporary_database


async def test_concurrent_runs_apply_each_migration_once(postgres_admin_url: str, tmp_path: Path) -> None:
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE t_first (id int PRIMARY KEY);")
    (tmp_path / "0002_second.sql").write_text("INSERT INTO t_first VALUES (1);")
    async with temporary_database(postgres_admin_url) as url:
        conns = [await asyncpg.connect(url) for _ in range(3)]
        results = await asyncio.gather(*(migrate(c, "svc", tmp_path) for c in conns))
        assert sorted(len(r) for r in results) == [0, 0, 2]
        assert await conns[0].fetchval("SELECT count(*) FROM t_first") == 1
        assert await migrate(conns[0], "svc", tmp_path) == []
        (tmp_path / "0003_third.sql").write_text("INSERT INTO t_first VALUES (2);")
        assert await migrate(conns[0], "svc", tmp_path) == ["0003_third"]
        versions = await conns[0].fetch("SELECT version FROM schema_migrations WHERE service = 'svc' ORDER BY 1")
        assert [r["version"] for r in versions] == [1, 2, 3]
        for c in conns:
            await c.close()


async def test_failed_migration_is_rolled_back_and_not_recorded(postgres_admin_url: str, tmp_path: Path) -> None:
    (tmp_path / "0001_ok.sql").write_text("CREATE TABLE t_ok (id int);")
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE t_bad (id int); SELECT * FROM no_such_table;")
    async with temporary_database(postgres_admin_url) as url:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn, "svc", tmp_path)
            raise AssertionError("the bad migration should have failed")
        except asyncpg.UndefinedTableError:
            pass
        assert await conn.fetchval("SELECT to_regclass('t_bad')") is None
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") == 1
        await conn.close()


async def test_a_connection_left_in_a_transaction_is_rolled_back_when_released(database_url) -> None:
    """The pool's light reset (common.db) still ends a transaction a request left open,
    so the next borrower neither sees nor commits its writes."""
    from courseschool.common.db import create_pool

    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        async with pool.acquire() as conn:
            await conn.execute("BEGIN")
            await conn.execute("CREATE TEMP TABLE left_open (x int) ON COMMIT DROP")
            assert conn.is_in_transaction()
        async with pool.acquire() as conn:  # max_size=1: the same connection
            assert not conn.is_in_transaction()
            assert await conn.fetchval("SELECT to_regclass('pg_temp.left_open')") is None
    finally:
        await pool.close()
