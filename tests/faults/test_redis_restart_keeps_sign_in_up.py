"""Issue 38, item 2: after a Redis restart, sign-in answered 503 on connections made
before it, for as long as the pool kept them (seen 5 to 71 s after Redis came back):
the client was made without retries, and redis-py 8 then retries nothing, not even its
health check. Now a connection error is retried once, on a new connection, by every
client the platform makes (`common/redis.create_redis`).

Over a Redis of the test's own, restarted on the same port with its pooled connections
made before: every sign-in and token call after it answers as before, and what
PostgreSQL holds (the grant, its refresh token) carries on."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx
import pytest
import redis.asyncio as aioredis
from litestar import Litestar

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.asgi import AppLifespan
from courseschool.common.settings import load_settings

from ..integration.flow import BASE_URL, Flow, Lifecycle, pkce_pair
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
async def app(database_url: str, kek: str, own_redis: OwnRedis, clean_db: asyncpg.Pool) -> AsyncIterator[Litestar]:
    settings = load_settings(
        AuthzSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=own_redis.url,
        key_encryption_key=kek,
        internal_token="internal-test-token",
    )
    authz = create_app(settings)
    async with AppLifespan(authz):
        yield authz


def _flow(app: Litestar, pool: asyncpg.Pool, admin: aioredis.Redis) -> Flow:
    return Flow(httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL), pool, admin)


async def _sign_in(flow: Flow, reg: dict[str, Any], user: dict[str, str]) -> list[int]:
    """One sign-in and code exchange, step by step: the statuses it was answered."""
    verifier, challenge = pkce_pair()
    statuses = []
    start = await flow.start(flow.authorize_params(reg, challenge))
    statuses.append(start.status_code)
    if start.status_code != 303:
        return statuses
    interaction = start.headers["location"]
    page, _ = await flow.page(interaction)
    statuses.append(page.status_code)
    if page.status_code != 200:
        return statuses
    login = await flow.login(interaction, user)
    statuses.append(login.status_code)
    consent = await flow.consent(interaction)
    statuses.append(consent.status_code)
    if consent.status_code != 303:
        return statuses
    code = httpx.URL(consent.headers["location"]).params["code"]
    statuses.append((await flow.exchange(reg, code, verifier)).status_code)
    return statuses


async def test_sign_in_and_tokens_answer_after_a_redis_restart(
    app: Litestar, own_redis: OwnRedis, clean_db: asyncpg.Pool
) -> None:
    admin = aioredis.from_url(own_redis.url)
    flows = [_flow(app, clean_db, admin) for _ in range(4)]
    try:
        reg = await flows[0].register()
        users = [await flows[0].user("owner", school=await flows[0].school()) for _ in flows]
        # Connections made before the restart: sign-ins side by side fill the pool.
        before = await asyncio.gather(*(_sign_in(f, reg, u) for f, u in zip(flows, users, strict=True)))
        assert all(s == [303, 200, 303, 303, 200] for s in before), before
        for f in flows:
            f.client.cookies.clear()
        tokens = await flows[0].tokens(reg, users[0])

        own_redis.stop()
        own_redis.start()  # same port, empty: every pooled connection is stale

        after = [await _sign_in(f, reg, u) for f, u in zip(flows, users, strict=True)]
        after += await asyncio.gather(*(_sign_in(f, reg, u) for f, u in zip(flows, users, strict=True)))
        assert all(s == [303, 200, 303, 303, 200] for s in after), after
        refreshed = await Lifecycle(flows[0]).refresh(reg, tokens["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text  # what PostgreSQL held carries on
    finally:
        for f in flows:
            await f.client.aclose()
        await admin.aclose()
