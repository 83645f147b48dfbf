"""The authorization server and the resource API side by side in the test's event
loop, sharing a real Postgres and Redis, with helpers to get tokens for people of
given roles at given schools."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
from litestar import Litestar

from courseschool.authz.app import create_app as create_authz
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.clients import PgClientStore
from courseschool.common.asgi import AppLifespan
from courseschool.common.clock import FrozenClock
from courseschool.common.settings import load_settings
from courseschool.resource_api.app import create_app as create_resource
from courseschool.resource_api.settings import ResourceSettings

from .conftest import AppClient
from .flow import BASE_URL, Flow
from .shelf import LentClock, Shelf

RS_CLIENT = ("resource-api-test", "resource-api-test-secret")


class ApiEnv:
    def __init__(self, flow: Flow, api: httpx.AsyncClient, rs_app: Litestar, pool: asyncpg.Pool) -> None:
        self.flow = flow
        self.api = api
        self.rs_app = rs_app
        self.pool = pool
        self.reg: dict[str, Any] | None = None
        self.authz_calls: list[str] = []  # paths the resource API asked the authorization server for
        self.resource_link: Any = None  # how authz reaches the resource API's internal paths (`.app`)

    async def school(self, slug: str) -> str:
        """A school at the authorization server only: the resource API learns of it itself."""
        return await self.flow.school(slug)

    async def token(self, scope: str, *, role: str = "owner", school: str = "acme", **extra: str) -> str:
        school_id = await self.school(school)
        user = await self.flow.user(role, school=school_id)
        self.reg = self.reg or await self.flow.register()
        self.flow.client.cookies.clear()  # a fresh browser: log in as this user
        tokens = await self.flow.tokens(self.reg, user, scope=scope, **extra)
        return tokens["access_token"]

    def bearer(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}


class _Later:
    """An ASGI app bound after it is referred to (the two apps call each other)."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@dataclass
class _Pair:
    """The two apps of an environment, built once per test process and lent (shelf.py):
    the authorization server reaches the resource API through `resource_link`, the
    resource API the authorization server through `to_authz`, which notes each path
    asked in `calls`; both read `clock`."""

    authz: Litestar
    resource: Litestar
    clock: LentClock
    resource_link: _Later
    calls: list[str]


def _pair(authz_settings: AuthzSettings, rs_settings: ResourceSettings) -> _Pair:
    clock = LentClock()
    link = _Later()  # authz reads activity from the resource API, made below
    to_resource = httpx.AsyncClient(transport=httpx.ASGITransport(app=link), base_url="http://resource")
    authz_app = create_authz(authz_settings, clock=clock, resource=to_resource)

    async def record(request: httpx.Request) -> None:
        pair.calls.append(request.url.path)

    to_authz = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=authz_app), base_url="http://authz", event_hooks={"request": [record]}
    )
    pair = _Pair(authz_app, create_resource(rs_settings, authz=to_authz, clock=clock), clock, link, [])
    return pair


@contextlib.asynccontextmanager
async def api_env(
    *,
    shelf: Shelf,
    authz_settings: AuthzSettings,
    database_url: str,
    redis_url: str,
    pool: asyncpg.Pool,
    redis: Any,
    clock: FrozenClock,
    mode: str,
    rs_redis_url: str | None = None,
    jwks_refetch: int = 0,
    resource_settings: Mapping[str, object] | None = None,
) -> AsyncIterator[ApiEnv]:
    """`resource_settings` adds to or overrides the resource API's settings."""
    wiring: dict[str, Any] = {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": rs_redis_url or redis_url,
        "token_validation": mode,
        "rs_client_id": RS_CLIENT[0],
        "rs_client_secret": RS_CLIENT[1],
        "internal_token": "internal-test-token",
        "jwks_refetch_interval": jwks_refetch,
        # The activity's background flush left to the tests (ActivityJob.run_once).
        "activity_flush_interval": 300,
    }
    rs_settings = load_settings(ResourceSettings, environ={}, **{**wiring, **(resource_settings or {})})
    built = functools.partial(_pair, authz_settings, rs_settings)
    with shelf.lend(("api", authz_settings, rs_settings), built) as pair, pair.clock.reading(clock):
        pair.resource_link.app = pair.resource  # a test may have pointed it elsewhere
        pair.calls = []
        async with AppLifespan(pair.authz):
            await PgClientStore(pool).ensure_service_client(
                client_id=RS_CLIENT[0], secret=RS_CLIENT[1], name="Resource API"
            )
            async with AppLifespan(pair.resource):
                if rs_redis_url is None:
                    assert await pair.resource.state.resource_api.verifier.feed.wait_healthy()
                async with (
                    AppClient(transport=httpx.ASGITransport(app=pair.authz), base_url=BASE_URL) as authz_client,
                    httpx.AsyncClient(transport=httpx.ASGITransport(app=pair.resource), base_url=BASE_URL) as api,
                ):
                    authz_client.app = pair.authz
                    running = ApiEnv(Flow(authz_client, pool, redis), api, pair.resource, pool)
                    running.authz_calls = pair.calls
                    running.resource_link = pair.resource_link
                    yield running
