"""The clients every token request authenticates are kept in memory (common/row_cache.py)
and dropped when Postgres announces a change of their row (migration 0011's trigger):
whoever writes, another replica, the admin CLI, plain SQL, the copy goes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.clients import CHANGES
from courseschool.common.clock import FrozenClock
from courseschool.common.row_cache import RowCache

from .admin_api import ADMIN, with_admin
from .conftest import serve
from .flow import Flow
from .tcp_proxy import postgres_proxy

INSERT = """
INSERT INTO authz_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, grant_types,
    response_types, application_type)
VALUES ($1, $2, '{}', 'none', '{}', '{}', 'native')
"""
NAME = "SELECT client_name FROM authz_clients WHERE client_id = $1"


class Counted:
    """A loader reading a client's name from the table, counting its reads."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.reads = 0

    async def __call__(self, client_id: str) -> str | None:
        self.reads += 1
        return await self.pool.fetchval(NAME, client_id)


@pytest.fixture
async def cache(database_url: str, clean_db: asyncpg.Pool) -> AsyncIterator[RowCache[str]]:
    rows: RowCache[str] = RowCache(database_url, CHANGES, retry=0.05)
    yield rows
    await rows.close()


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.01)
    return False


async def test_a_row_is_read_once_then_kept(cache: RowCache[str], clean_db: asyncpg.Pool) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    load = Counted(clean_db)
    assert await cache.get("app-1", load) == "First name"
    assert await cache.get("app-1", load) == "First name"
    assert load.reads == 1


async def test_a_change_by_anyone_drops_the_copy(
    cache: RowCache[str], clean_db: asyncpg.Pool, database_url: str
) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    await clean_db.execute(INSERT, "app-2", "Other app")
    load = Counted(clean_db)
    await cache.get("app-1", load)
    await cache.get("app-2", load)
    # Plain SQL on a connection of its own, as another replica or an operator's tool writes.
    other = await asyncpg.connect(database_url)
    try:
        await other.execute("UPDATE authz_clients SET client_name = 'New name' WHERE client_id = 'app-1'")
    finally:
        await other.close()
    assert await eventually(lambda: _is(cache, "app-1", load, "New name"))
    reads = load.reads
    assert await cache.get("app-2", load) == "Other app" and load.reads == reads  # the other row stays kept


async def test_deleted_and_truncated_rows_go_and_absent_ones_are_never_kept(
    cache: RowCache[str], clean_db: asyncpg.Pool
) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    await clean_db.execute(INSERT, "app-2", "Other app")
    load = Counted(clean_db)
    await cache.get("app-1", load)
    await cache.get("app-2", load)
    await clean_db.execute("DELETE FROM authz_clients WHERE client_id = 'app-1'")
    assert await eventually(lambda: _is(cache, "app-1", load, None))
    reads = load.reads
    assert await cache.get("app-1", load) is None and load.reads == reads + 1  # a miss is asked again
    await clean_db.execute("TRUNCATE authz_clients CASCADE")
    assert await eventually(lambda: _is(cache, "app-2", load, None))


async def test_a_read_overtaken_by_a_change_is_not_kept(cache: RowCache[str], clean_db: asyncpg.Pool) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    await cache.get("absent", Counted(clean_db))  # the listener is up

    async def slow_read(client_id: str) -> str | None:
        name = await clean_db.fetchval(NAME, client_id)
        await clean_db.execute("UPDATE authz_clients SET client_name = 'New name' WHERE client_id = $1", client_id)
        await asyncio.sleep(0.3)  # the notice of the change arrives while this read is still out
        return name

    assert await cache.get("app-1", slow_read) == "First name"
    load = Counted(clean_db)
    assert await cache.get("app-1", load) == "New name" and load.reads == 1


async def test_this_process_drops_its_own_change_without_waiting(cache: RowCache[str], clean_db: asyncpg.Pool) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    load = Counted(clean_db)
    await cache.get("app-1", load)
    await clean_db.execute("UPDATE authz_clients SET client_name = 'New name' WHERE client_id = 'app-1'")
    cache.forget("app-1")
    assert await cache.get("app-1", load) == "New name"


async def test_without_its_listener_nothing_is_kept(cache: RowCache[str], clean_db: asyncpg.Pool) -> None:
    await clean_db.execute(INSERT, "app-1", "First name")
    load = Counted(clean_db)
    await cache.get("app-1", load)
    backend = await clean_db.fetchval(
        "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()"
    )
    assert backend is not None
    await clean_db.execute("SELECT pg_terminate_backend($1)", backend)
    # Changes made while it is down are never announced to it: nothing it held survives.
    await clean_db.execute("UPDATE authz_clients SET client_name = 'New name' WHERE client_id = 'app-1'")
    assert await eventually(lambda: _is(cache, "app-1", load, "New name"))
    await asyncio.sleep(0.06)
    reads = load.reads
    await cache.get("app-1", load)  # listening again, and kept again
    await cache.get("app-1", load)
    assert load.reads <= reads + 1


async def test_a_silent_listener_is_given_up_and_its_copies_with_it(database_url: str, clean_db: asyncpg.Pool) -> None:
    """A partition closes nothing: the listening connection stays open and no notice of a
    change arrives. The cache stops serving from memory once its listener has not
    answered for `silence` seconds, well before the entries' own lifetime ends."""
    await clean_db.execute(INSERT, "app-1", "First name")
    async with postgres_proxy(database_url) as proxy:
        rows: RowCache[str] = RowCache(proxy.url, CHANGES, retry=0.05, ping_every=0.1, silence=1.0)
        try:
            load = Counted(clean_db)
            assert await rows.get("app-1", load) == "First name"
            await asyncio.sleep(2.0)  # twice the silence limit: the answered pings keep the listener
            assert await rows.get("app-1", load) == "First name" and load.reads == 1  # still kept

            proxy.stall()
            await clean_db.execute("UPDATE authz_clients SET client_name = 'New name' WHERE client_id = 'app-1'")
            await asyncio.sleep(0.2)  # the notice is stuck in the partition...
            assert await rows.get("app-1", load) == "First name"  # ...so the old copy is still served
            assert await eventually(lambda: _is(rows, "app-1", load, "New name"), seconds=3.0)
            reads = load.reads
            await rows.get("app-1", load)
            assert load.reads == reads + 1  # nothing kept while the listener cannot be heard

            proxy.resume()
            assert await eventually(lambda: _kept(rows, "app-1", load), seconds=5.0)  # listening again
        finally:
            proxy.resume()
            await rows.close()


async def test_an_unreachable_listener_means_every_lookup_asks(clean_db: asyncpg.Pool) -> None:
    rows: RowCache[str] = RowCache("postgresql://nobody@127.0.0.1:9/none", CHANGES)
    await clean_db.execute(INSERT, "app-1", "First name")
    load = Counted(clean_db)
    assert [await rows.get("app-1", load) for _ in range(3)] == ["First name"] * 3
    assert load.reads == 3
    await rows.close()


async def test_a_client_disabled_through_another_replica_is_refused(
    flow: Flow, authz_settings: AuthzSettings, clock: FrozenClock
) -> None:
    """Two authorization servers on one database: the one that authenticated a resource
    server (and keeps its client) refuses it once the other one disabled it."""
    rs = await flow.integration()
    tokens = await flow.tokens()
    form = {"token": tokens["access_token"], "client_id": rs["client_id"], "client_secret": rs["client_secret"]}
    first = await flow.client.post("/api/oauth/introspect", data=form)
    assert first.status_code == 200 and first.json()["active"] is True
    async with serve(create_app(with_admin(authz_settings), clock=clock)) as other:
        done = await other.post(f"/internal/admin/clients/{rs['client_id']}/disable", headers=ADMIN)
        assert done.status_code == 200, done.text

    async def refused() -> bool:
        answer = await flow.client.post("/api/oauth/introspect", data=form)
        return answer.status_code == 401 and answer.json()["error"] == "invalid_client"

    assert await eventually(refused)


async def _is(cache: RowCache[str], key: str, load: Callable[[str], Awaitable[str | None]], want: object) -> bool:
    return await cache.get(key, load) == want


async def _kept(cache: RowCache[str], key: str, load: Counted) -> bool:
    """Whether the row is served from memory: two lookups, at most one read."""
    reads = load.reads
    await cache.get(key, load)
    await cache.get(key, load)
    return load.reads <= reads + 1
