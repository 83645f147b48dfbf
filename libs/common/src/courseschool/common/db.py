"""The asyncpg pool and the forward-only SQL migration runner.

Each service owns a folder of migrations named `NNNN_name.sql`. `migrate` applies the
ones not yet recorded in `schema_migrations`, each in its own transaction, under a
Postgres advisory lock so that several replicas (or a Job and a pod) never race.
Each transaction waits at most MIGRATION_LOCK_TIMEOUT for a table's lock: a migration
queued behind a long transaction would otherwise hold up every query of the serving
release behind its own request for the lock; it fails instead, and the step is run again.
`schema.py` compares what the code knows with what the database has applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
from asyncpg.pool import PoolAcquireContext
from redis.asyncio import Redis

from .logging import get_logger
from .metrics import unwatch_pool, watch_pool
from .redis import create_redis
from .server_versions import POSTGRES_OLDEST, UnsupportedServer, check_servers, postgres_version, require
from .settings import BaseSettings

log = get_logger(__name__)

_MIGRATION_LOCK = 0x636F7572  # "cour": one lock for every service's migrations
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    service    text        NOT NULL,
    version    integer     NOT NULL,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service, version)
)
"""
_APPLIED = "SELECT version FROM schema_migrations WHERE service = $1"
MIGRATION_LOCK_TIMEOUT = "10s"

# A service's migrations: its folder, or folders whose files follow one another (a test
# appends a folder of its own to play the next release).
Folders = Path | Sequence[Path]
_RECORD = "INSERT INTO schema_migrations (service, version, name) VALUES ($1, $2, $3)"


async def _init_connection(conn: asyncpg.Connection) -> None:
    for name in ("json", "jsonb"):
        await conn.set_type_codec(
            name,
            schema="pg_catalog",
            encoder=lambda v: msgspec.json.encode(v).decode(),
            decoder=msgspec.json.decode,
        )


class _Lent:
    """What `Pool.acquire` gives the task inside `held` instead of a checkout: the
    block's one connection, checked out when its first statement needs it (a block that
    runs none costs nothing); entering it again releases nothing."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.task = asyncio.current_task()
        self.checkout: Any = None  # asyncpg's acquire context, once a statement needed it
        self.connection: asyncpg.Connection | None = None

    async def __aenter__(self) -> asyncpg.Connection:
        if self.connection is None:
            checkout = _Checkout(self.pool, None)
            self.connection = await checkout.__aenter__()
            self.checkout = checkout
        return self.connection

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def give_back(self, *exc: Any) -> None:
        if self.checkout is not None:
            checkout, self.checkout, self.connection = self.checkout, None, None
            await checkout.__aexit__(*exc)


_LENT: ContextVar[_Lent | None] = ContextVar("courseschool_lent_connection", default=None)


class _Checkout(PoolAcquireContext):
    """asyncpg's checkout, which drops every connection of the pool when a statement on
    its connection found the server read-only (a primary demoted or fenced, a standby
    reached): the pool's next checkouts connect anew, through the DSN's host list to
    the server that takes writes now (`target_session_attrs=read-write`). The request
    that met it is answered 503 (answers.UNAVAILABLE), as when the server is down."""

    __slots__ = ()

    async def __aexit__(self, *exc: Any) -> None:
        if isinstance(exc[1], asyncpg.ReadOnlySQLTransactionError):
            log.warning("postgres_read_only", action="reconnecting")
            await self.pool.expire_connections()
        await super().__aexit__(*exc)


class Pool(asyncpg.Pool):
    """asyncpg's pool, which lends a task inside `held` one connection: every statement
    a store runs there, through `fetchrow` or `acquire` alike, goes over it instead of a
    checkout of its own. A checkout (the pool's queue, its time-outs, the reset on
    release) costs about as much CPU as a short statement (bench/RESULTS.md). Only the
    task that entered the block is lent the connection: tasks it starts (which copy its
    context) check out their own, as two statements at once on one connection fail."""

    def acquire(self, *, timeout: float | None = None) -> Any:
        lent = _LENT.get()
        if lent is not None and lent.pool is self and lent.task is asyncio.current_task():
            return lent
        return _Checkout(self, timeout)


def _lent_here(pool: asyncpg.Pool) -> bool:
    lent = _LENT.get()
    return lent is not None and lent.pool is pool and lent.task is asyncio.current_task()


@contextlib.asynccontextmanager
async def held(pool: asyncpg.Pool) -> AsyncIterator[None]:
    """One connection for the statements this task runs on `pool` until the block ends,
    checked out at the first of them (each statement commits on its own as before; a
    transaction opened inside is one on this connection). Nested, the outer block's
    connection is kept; on a plain asyncpg pool, nothing changes."""
    if not isinstance(pool, Pool) or _lent_here(pool):
        yield
        return
    lent = _Lent(pool)
    mark = _LENT.set(lent)
    try:
        yield
    except BaseException as exc:
        _LENT.reset(mark)
        await lent.give_back(type(exc), exc, exc.__traceback__)
        raise
    _LENT.reset(mark)
    await lent.give_back(None, None, None)


async def create_pool(dsn: str, *, min_size: int = 0, max_size: int = 10) -> Pool:
    """A pool that opens connections on demand (so a service starts, unready, while
    Postgres is down), with bounded connect and command times. asyncpg.create_pool with
    our pool class: the same arguments, given to the class it would make."""
    pool = Pool(
        dsn,
        connection_class=asyncpg.Connection,
        record_class=asyncpg.Record,
        min_size=min_size,
        max_size=max_size,
        max_queries=50000,
        loop=None,
        connect=_connect,
        setup=None,
        init=_init_connection,
        reset=_reset_connection,
        max_inactive_connection_lifetime=300,
        timeout=3,
        command_timeout=15,
    )
    await pool
    return pool


async def _connect(*args: Any, **kwargs: Any) -> asyncpg.Connection:
    """asyncpg's connect, with every failure to reach the server (refused, reset, no
    socket file, no route, a name that does not resolve, a time-out) raised as the
    driver's connection error, so it is answered 503 like every other outage while a
    bug that happens to be an OSError is not; a server older than the supported range
    (server_versions.py) refused."""
    try:
        conn = await asyncpg.connect(*args, **kwargs)
    except OSError as exc:
        raise asyncpg.exceptions.ClientCannotConnectError(f"PostgreSQL is out of reach: {type(exc).__name__}") from exc
    try:
        # Every connection, so a server that was down at start is judged when it answers.
        require("PostgreSQL", postgres_version(conn), POSTGRES_OLDEST)
    except UnsupportedServer:
        conn.terminate()
        raise
    return conn


async def _reset_connection(conn: asyncpg.Connection) -> None:
    """Run when a connection goes back to the pool. asyncpg's default reset is one more
    round trip per checkout (unlock advisory locks, CLOSE ALL, UNLISTEN *, RESET ALL) for
    session state this code never leaves on a pooled connection: its advisory locks are
    transaction-scoped, it neither LISTENs nor SETs, and cursors live in transactions.
    A transaction left open (a cancelled request) is still rolled back."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


def migration_files(folders: Folders) -> list[tuple[int, str, Path]]:
    """(version, name, path) of every migration, in the order they apply."""
    found = []
    for directory in [folders] if isinstance(folders, Path) else folders:
        for path in sorted(directory.glob("*.sql")):
            m = _NAME.match(path.name)
            if not m:
                raise ValueError(f"migration file name must be NNNN_name.sql: {path.name}")
            found.append((int(m.group(1)), m.group(2), path))
    versions = [v for v, _, _ in found]
    if len(versions) != len(set(versions)):
        raise ValueError(f"duplicate migration version in {folders}")
    if versions != sorted(versions):
        raise ValueError(f"migrations out of order across {folders}")
    return found


async def migrate(conn: asyncpg.Connection, service: str, directory: Folders) -> list[str]:
    """Apply pending migrations of `service`; return the names applied."""
    applied_now: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
    try:
        await conn.execute(_CREATE_TABLE)
        done = {r["version"] for r in await conn.fetch(_APPLIED, service)}
        for version, name, path in migration_files(directory):
            if version in done:
                continue
            async with conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = '{MIGRATION_LOCK_TIMEOUT}'")
                await conn.execute(path.read_text())
                await conn.execute(_RECORD, service, version, name)
            log.info("migration_applied", service=service, version=version, name=name)
            applied_now.append(f"{version:04d}_{name}")
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    return applied_now


async def migrate_dsn(dsn: str, service: str, directory: Folders) -> list[str]:
    conn = await asyncpg.connect(dsn)
    try:
        require("PostgreSQL", postgres_version(conn), POSTGRES_OLDEST)  # before any migration runs
        return await migrate(conn, service, directory)
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def backing_services(settings: BaseSettings, service: str) -> AsyncIterator[tuple[asyncpg.Pool, Redis]]:
    """A service's Postgres pool (watched by the metrics) and Redis client for the
    life of its app; both closed on the way out."""
    if not settings.database_url or not settings.redis_url:
        raise RuntimeError("DATABASE_URL and REDIS_URL are required")
    pool = await create_pool(settings.database_url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
    redis = create_redis(settings.redis_url, settings.redis_sentinel)
    try:
        await check_servers(pool, redis)  # an older server than the supported range: no start
    except BaseException:
        await redis.aclose()
        await pool.close()
        raise
    watch_pool(service, pool)
    try:
        yield pool, redis
    finally:
        unwatch_pool(service)
        await redis.aclose()
        await pool.close()
