"""The authorization server in-process (ASGI), over a real Postgres and Redis."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar.testing import AsyncTestClient

from courseschool.authz.protocol.clock import FrozenClock
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.web.app import create_app
from courseschool.common.settings import load_settings

from .flow import BASE_URL, Flow


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(int(time.time()))


@pytest.fixture
def authz_settings(database_url: str, redis_url: str, kek: str) -> AuthzSettings:
    return load_settings(
        AuthzSettings, environ={}, base_url=BASE_URL, database_url=database_url, redis_url=redis_url,
        key_encryption_key=kek, internal_token="internal-test-token",
    )


@pytest.fixture
async def client(
    authz_settings: AuthzSettings, clean_db: asyncpg.Pool, redis_client: object, clock: FrozenClock
) -> AsyncIterator[AsyncTestClient]:
    app = create_app(authz_settings, clock=clock)
    async with AsyncTestClient(app=app, base_url=BASE_URL) as test_client:
        test_client.follow_redirects = False
        yield test_client


@pytest.fixture
async def flow(client: AsyncTestClient, clean_db: asyncpg.Pool, redis_client: object) -> Flow:
    return Flow(client, clean_db, redis_client)
