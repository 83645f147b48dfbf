"""The supported server range (courseschool.common.server_versions): a service pointed at
a PostgreSQL or Redis older than it does not start, and says which version it found and
which it needs; the test servers (containers or embedded) are inside it. The old servers
are fakes that only report a version (tests/support/old_servers.py)."""

from __future__ import annotations

import asyncpg
import msgspec
import pytest
import redis.asyncio as aioredis

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.db import create_pool, migrate_dsn
from courseschool.common.redis import create_redis
from courseschool.common.server_versions import (
    POSTGRES_OLDEST,
    REDIS_OLDEST,
    UnsupportedServer,
    check_postgres,
    check_redis,
    version_tuple,
)
from courseschool.discovery.app import create_app as create_discovery
from courseschool.discovery.settings import DiscoverySettings
from courseschool.platform.migrate import MIGRATIONS

from ..support.net import free_port
from ..support.old_servers import old_postgres, old_redis
from .conftest import BASE_URL


def _with(settings: AuthzSettings, **changes: str) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(settings), **changes})


async def _start(app) -> str:
    """The start's failure. Through Litestar's own lifespan context, not the ASGI lifespan
    protocol: that one formats the traceback, and formatting this one trips CPython
    3.11.7's AST recursion-depth bug (later imports in the worker then fail)."""
    with pytest.raises(BaseException) as failed:
        async with app.lifespan():
            pass
    return "\n".join(str(e) for e in _leaves(failed.value))


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


@pytest.mark.parametrize(
    ("text", "version"),
    [("15.20 (Debian 15.20-0+deb12u1)", (15, 20)), ("16.2", (16, 2)), ("17devel", (17,)), ("7.2.4", (7, 2, 4))],
)
def test_a_server_s_version_string_is_read_as_numbers(text: str, version: tuple[int, ...]) -> None:
    assert version_tuple(text) == version


async def test_the_authorization_server_refuses_an_older_postgresql(authz_settings: AuthzSettings) -> None:
    async with old_postgres("14.11") as dsn:
        failure = await _start(create_app(_with(authz_settings, database_url=dsn)))
    assert "PostgreSQL 14.11 is older than PostgreSQL 15.0, the oldest this platform supports" in failure


async def test_the_authorization_server_refuses_an_older_redis(authz_settings: AuthzSettings) -> None:
    async with old_redis("6.2.14") as url:
        failure = await _start(create_app(_with(authz_settings, redis_url=url)))
    assert "Redis 6.2.14 is older than Redis 7.0, the oldest this platform supports" in failure


async def test_discovery_refuses_an_older_redis() -> None:
    async with old_redis("6.0.16") as url:
        settings = DiscoverySettings(base_url=BASE_URL, internal_token="internal-test-token", redis_url=url)
        failure = await _start(create_discovery(settings, upstreams={}))
    assert "Redis 6.0.16 is older than Redis 7.0" in failure


async def test_the_migrations_refuse_an_older_postgresql_before_running() -> None:
    service, directory = MIGRATIONS[0]
    async with old_postgres("13.4") as dsn:
        with pytest.raises(UnsupportedServer, match=r"PostgreSQL 13\.4 is older than PostgreSQL 15\.0"):
            await migrate_dsn(dsn, service, directory)


async def test_a_pool_never_lends_a_connection_to_an_older_postgresql() -> None:
    """Checked at every new connection, not only at start: a server that was down when
    the service started and answers later is judged as well."""
    async with old_postgres("14.0") as dsn:
        pool = await create_pool(dsn, min_size=0, max_size=1)
        try:
            with pytest.raises(UnsupportedServer, match=r"PostgreSQL 14\.0 is older"):
                await pool.fetchval("SELECT 1")
        finally:
            await pool.close()


async def test_a_server_that_does_not_answer_is_left_unjudged() -> None:
    """A service starts unready while its servers are down (tests/faults): no verdict."""
    port = free_port()
    pool = await create_pool(f"postgresql://postgres@127.0.0.1:{port}/postgres", min_size=0, max_size=1)
    redis = create_redis(f"redis://127.0.0.1:{port}/0")
    try:
        assert await check_postgres(pool) is None
        assert await check_redis(redis) is None
    finally:
        await redis.aclose()
        await pool.close()


async def test_the_test_servers_are_inside_the_supported_range(
    db_pool: asyncpg.Pool, redis_client: aioredis.Redis
) -> None:
    postgres, redis = await check_postgres(db_pool), await check_redis(redis_client)
    assert postgres is not None and version_tuple(postgres) >= POSTGRES_OLDEST
    assert redis is not None and version_tuple(redis) >= REDIS_OLDEST
