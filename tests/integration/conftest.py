"""The authorization server in-process (ASGI), over a real Postgres and Redis."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.client_metadata import DocumentWeb
from courseschool.common.asgi import AppLifespan
from courseschool.common.clock import FrozenClock
from courseschool.common.settings import load_settings

from ..conftest import PASSWORD_COST
from ..support.tls import HttpsServer, https_server, make_ca_and_server_cert, site_web
from .admin_api import with_admin
from .cimd import cimd_settings
from .flow import BASE_URL, Flow
from .shelf import Shelf, authz_app


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(int(time.time()))


@pytest.fixture
def authz_settings(database_url: str, redis_url: str, kek: str) -> AuthzSettings:
    return load_settings(
        AuthzSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=redis_url,
        key_encryption_key=kek,
        internal_token="internal-test-token",
        **PASSWORD_COST,
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


@pytest.fixture(scope="session")
def shelf() -> Shelf:
    """The apps this test process has built, lent to its tests (shelf.py)."""
    return Shelf()


@pytest.fixture
async def client(
    authz_settings: AuthzSettings, clean_db: asyncpg.Pool, redis_client: object, clock: FrozenClock, shelf: Shelf
) -> AsyncIterator[AppClient]:
    with authz_app(shelf, authz_settings, clock) as app:
        async with serve(app) as app_client:
            yield app_client


@pytest.fixture
async def flow(client: AppClient, clean_db: asyncpg.Pool, redis_client: object) -> Flow:
    return Flow(client, clean_db, redis_client)


@pytest.fixture
async def admin_flow(
    authz_settings: AuthzSettings, clean_db: asyncpg.Pool, redis_client: object, clock: FrozenClock, shelf: Shelf
) -> AsyncIterator[Flow]:
    """An authorization server whose admin API is on (ADMIN_TOKEN: admin_api.ADMIN)."""
    with authz_app(shelf, with_admin(authz_settings), clock) as app:
        async with serve(app) as client:
            yield Flow(client, clean_db, redis_client)


@pytest.fixture(scope="session")
def site_certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The CA of every `site` of this test process, and the certificate its servers present."""
    return make_ca_and_server_cert(tmp_path_factory.mktemp("site-ca"))


@pytest.fixture(scope="session")
def site_document_web(site_certs: tuple[Path, Path, Path]) -> DocumentWeb:
    """Where an app of `cimd_flow` fetches documents: any `site` of this process."""
    return site_web(site_certs[0])


@pytest.fixture
def site(tmp_path: Path, site_certs: tuple[Path, Path, Path]) -> Iterator[tuple[HttpsServer, Path]]:
    """A local HTTPS server and its CA, standing in for the web (Client ID Metadata Documents)."""
    with https_server(tmp_path, site_certs) as running:
        yield running


@pytest.fixture
async def cimd_flow(
    authz_settings: AuthzSettings,
    site: tuple[HttpsServer, Path],
    site_document_web: DocumentWeb,
    clean_db: asyncpg.Pool,
    redis_client: object,
    clock: FrozenClock,
    shelf: Shelf,
) -> AsyncIterator[Flow]:
    """The flow against an app that fetches metadata documents from `site`."""
    with authz_app(shelf, cimd_settings(authz_settings), clock, document_web=site_document_web) as app:
        async with serve(app) as client:
            yield Flow(client, clean_db, redis_client)


@pytest.fixture
def open_api_env(
    authz_settings: AuthzSettings,
    database_url: str,
    redis_url: str,
    clean_db: asyncpg.Pool,
    redis_client: object,
    clock: FrozenClock,
    shelf: Shelf,
) -> Callable[..., AbstractAsyncContextManager[Any]]:
    """Opens the authorization server and the resource API side by side, an
    `api_env.ApiEnv`, on this test's database, Redis and clock:
    `async with open_api_env(mode="jwt") as env`; keywords add to or override those.
    (Imported here, not at the top: `api_env` imports this module.)"""
    from .api_env import api_env

    wiring = {
        "authz_settings": authz_settings,
        "database_url": database_url,
        "redis_url": redis_url,
        "pool": clean_db,
        "redis": redis_client,
        "clock": clock,
        "shelf": shelf,
    }
    return lambda **options: api_env(**{**wiring, **options})


@pytest.fixture
async def jwt_env(open_api_env: Callable[..., AbstractAsyncContextManager[Any]]) -> AsyncIterator[object]:
    """The authorization server and the resource API (checking JWTs) side by side."""
    async with open_api_env(mode="jwt") as running:
        yield running


@pytest.fixture
async def here(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[Flow]:
    """The authorization server at http://localhost:8000: a host name, where browsers
    allow passkeys (WebAuthn refuses an IP address as relying party)."""
    from courseschool.authz.app import create_app

    from .passkeys import ORIGIN, serve_at_localhost
    from .sign_in import with_settings

    settings = with_settings(authz_settings, base_url=ORIGIN)
    async with serve_at_localhost(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)
