"""Fixtures shared by every test: a real Postgres database and a real Redis."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from courseschool.common.db import migrate
from courseschool.common.jose import new_kek
from courseschool.platform.migrate import MIGRATIONS

from .infra import postgres_server, redis_server, temporary_database

TABLES = (
    "authz_refresh_tokens",
    "authz_codes",
    "authz_revoked_access_tokens",
    "authz_grants",
    "authz_login_sessions",
    "authz_clients",
    "authz_trusted_domains",
    "authz_events",
    "authz_users",
    "authz_schools",
    "api_activity_changes",
    "api_activity_reads",
    "api_files",
    "api_singletons",
    "api_items",
    "api_schools",
)  # signing keys persist across tests: they are configuration, and slow to make


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands that keep a log in the user's state folder (the admin CLI) keep it in the
    session's temporary folder, not in the home of whoever runs the tests."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
async def database_url(postgres_admin_url: str) -> AsyncIterator[str]:
    """A database of this test session's own, migrated, dropped at the end."""
    async with temporary_database(postgres_admin_url) as url:
        conn = await asyncpg.connect(url)
        try:
            for service, directory in MIGRATIONS:
                await migrate(conn, service, directory)
        finally:
            await conn.close()
        yield url


@pytest.fixture(scope="session")
async def db_pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    from courseschool.common.db import create_pool

    pool = await create_pool(database_url, min_size=1, max_size=4)
    yield pool
    await pool.close()


@pytest.fixture
async def clean_db(db_pool: asyncpg.Pool) -> asyncpg.Pool:
    """Each test starts from empty tables."""
    await db_pool.execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")
    return db_pool


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def kek() -> str:
    return new_kek()


def pytest_report_header(config: pytest.Config) -> list[str]:
    import os

    chosen = [
        f"{what}: {'the server of ' + name if os.environ.get(name) else 'a container (testcontainers) or embedded, chosen at first use'}"
        for what, name in (("PostgreSQL", "TEST_DATABASE_URL"), ("Redis", "TEST_REDIS_URL"))
    ]
    return ["test servers: " + "; ".join(chosen) + " (the path taken is in the summary)"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which path each test server (and the container tier's image) took, and why."""
    from .infra import PATHS_TAKEN

    if PATHS_TAKEN:
        terminalreporter.section("test servers and containers")
        for what, path in PATHS_TAKEN.items():
            terminalreporter.write_line(f"{what}: {path}")
