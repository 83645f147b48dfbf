"""The authorization server's Litestar application."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from courseschool.common.db import create_pool
from courseschool.common.redis import create_redis
from courseschool.common.metrics import unwatch_pool, watch_pool
from courseschool.common.web import service_app

from ..protocol.clock import Clock
from ..service import AuthzService
from ..settings import AuthzSettings
from .admin import ADMIN_ROUTES
from .handlers import ROUTES

MAX_BODY = 64 * 1024


def create_app(settings: AuthzSettings, *, clock: Clock | None = None) -> Litestar:
    holder: dict[str, AuthzService] = {}

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        if not settings.database_url or not settings.redis_url:
            raise RuntimeError("DATABASE_URL and REDIS_URL are required")
        pool = await create_pool(settings.database_url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
        redis = create_redis(settings.redis_url)
        try:
            watch_pool("authz", pool)
            service = AuthzService(settings, pool, redis, clock=clock)
            await service.start()
            holder["service"] = service
            maintenance = asyncio.create_task(service.maintenance_loop())
            try:
                yield
            finally:
                maintenance.cancel()
                if service.fetcher is not None:
                    await service.fetcher.aclose()
        finally:
            holder.clear()
            unwatch_pool("authz")
            await redis.aclose()
            await pool.close()

    def provide_authz() -> AuthzService:
        return holder["service"]

    async def check_postgres() -> None:
        await holder["service"].pool.fetchval("SELECT 1")

    async def check_redis() -> None:
        await holder["service"].redis.ping()

    app = service_app(
        "authz",
        route_handlers=[*ROUTES, *ADMIN_ROUTES],
        ready_checks={"postgres": check_postgres, "redis": check_redis},
        dependencies={"authz": Provide(provide_authz, sync_to_thread=False)},
        lifespan=[lifespan],
        request_max_body_size=MAX_BODY,
        openapi_config=OpenAPIConfig(title="Course School authorization server", version="1.0.0", path="/api/oauth/schema"),
    )
    app.state.holder = holder
    return app
