"""The authorization server in-process (ASGI), over a real Postgres and Redis."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
import httpx
from litestar import Litestar

from courseschool.authz.protocol.clock import FrozenClock
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.web.app import create_app
from courseschool.common.asgi import AppLifespan
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


class AppClient(httpx.AsyncClient):
    """An HTTP client for an app running in the test's own event loop (so tests may
    also call the app's service directly)."""

    app: Litestar


@asynccontextmanager
async def serve(app: Litestar) -> AsyncIterator[AppClient]:
    async with AppLifespan(app):
        async with AppClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            client.app = app
            yield client


@pytest.fixture
async def client(
    authz_settings: AuthzSettings, clean_db: asyncpg.Pool, redis_client: object, clock: FrozenClock
) -> AsyncIterator[AppClient]:
    async with serve(create_app(authz_settings, clock=clock)) as app_client:
        yield app_client


@pytest.fixture
async def flow(client: AppClient, clean_db: asyncpg.Pool, redis_client: object) -> Flow:
    return Flow(client, clean_db, redis_client)
