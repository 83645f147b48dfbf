"""A Redis server that answers but refuses the command (out of memory under `noeviction`,
READONLY on a replica, a script error) is answered like one that cannot be reached: a
503 with Retry-After, as JSON, or as the error page where a person is looking; never a
500 with a traceback. Over a Redis of the test's own (tests/faults/servers.py: the
shared server's configuration is never touched) and the session's Postgres."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from litestar import get

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.asgi import AppLifespan
from courseschool.common.settings import load_settings
from courseschool.common.web import service_app

from ..integration.flow import BASE_URL, Flow, pkce_pair
from ..support.net import free_port
from .servers import OwnRedis, server_folder


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    folder = server_folder()
    server = OwnRedis(folder)
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
async def admin_redis(own_redis: OwnRedis) -> AsyncIterator[aioredis.Redis]:
    """A connection of the test's to its own server, to make it refuse."""
    client = aioredis.from_url(own_redis.url)
    yield client
    await client.aclose()


async def _out_of_memory(admin: aioredis.Redis) -> None:
    """`maxmemory` far below what the server already uses, nothing to evict: every
    command that may grow memory is refused with OOM."""
    await admin.config_set("maxmemory-policy", "noeviction")
    await admin.config_set("maxmemory", "1")


async def _read_only(admin: aioredis.Redis) -> None:
    """A replica of a primary that is not there (nothing listens on the port): it keeps
    answering, and refuses every write with READONLY."""
    await admin.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))


REFUSALS = {"out_of_memory": _out_of_memory, "read_only": _read_only}


@pytest.fixture
async def flow(
    database_url: str, kek: str, own_redis: OwnRedis, clean_db: Any, admin_redis: aioredis.Redis
) -> AsyncIterator[Flow]:
    settings = load_settings(
        AuthzSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=own_redis.url,
        key_encryption_key=kek,
        internal_token="internal-test-token",
    )
    app = create_app(settings)
    async with AppLifespan(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            yield Flow(client, clean_db, admin_redis)


def _is_retry_later(response: httpx.Response) -> None:
    assert response.status_code == 503, (response.status_code, response.text[:500])
    assert response.headers["retry-after"] == "1"
    assert "Traceback" not in response.text


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
async def test_a_redis_refusal_at_sign_in_is_a_503_page_not_a_500(
    flow: Flow, admin_redis: aioredis.Redis, refusal: str
) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    params = flow.authorize_params(reg, challenge)
    await REFUSALS[refusal](admin_redis)
    response = await flow.start(params)  # stores the pending interaction in Redis
    _is_retry_later(response)
    # A person is looking: the error page, in words, not JSON.
    assert response.headers["content-type"].startswith("text/html")
    assert "Course School is busy or partly down" in response.text
    assert await flow.redis_keys() == 0  # nothing was stored


async def test_a_redis_refusal_behind_an_api_is_a_json_503(own_redis: OwnRedis, admin_redis: aioredis.Redis) -> None:
    """The shared error answer of every service (common/answers.py), on a route that
    writes to Redis as the services' own do, and on one whose Lua script fails."""

    client = aioredis.from_url(own_redis.url)

    @get("/write")
    async def write() -> dict[str, str]:
        await client.set("written", "x" * 1000)
        return {"written": "yes"}

    @get("/script")
    async def script() -> dict[str, str]:
        await client.eval("return redis.error_reply('ERR refused by the script')", 0)
        return {"ran": "yes"}

    app = service_app("test", route_handlers=[write, script], ready_checks={})
    try:
        async with AppLifespan(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as http:
                assert (await http.get("/write")).status_code == 200
                script_failed = await http.get("/script")
                _is_retry_later(script_failed)
                assert script_failed.json()["error"] == "temporarily_unavailable"
                for make_it_refuse in (_out_of_memory, _read_only):
                    await make_it_refuse(admin_redis)
                    refused = await http.get("/write")
                    _is_retry_later(refused)
                    assert refused.headers["content-type"] == "application/json"
                    assert refused.json()["error"] == "temporarily_unavailable"
    finally:
        await client.aclose()
