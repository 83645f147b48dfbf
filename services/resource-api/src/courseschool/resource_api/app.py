"""The resource API's Litestar application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from litestar import Litestar, Request, Response, get

from courseschool.common.db import create_pool
from courseschool.common.errors import NotFoundError
from courseschool.common.redis import create_redis
from courseschool.common.secrets import same
from courseschool.common.web import EXCEPTION_HANDLERS, RequestIdMiddleware, health_handlers

from .metadata import protected_resource_metadata
from .settings import ResourceSettings


def create_app(settings: ResourceSettings) -> Litestar:
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        if not settings.database_url or not settings.redis_url:
            raise RuntimeError("DATABASE_URL and REDIS_URL are required")
        state["pool"] = await create_pool(settings.database_url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
        state["redis"] = create_redis(settings.redis_url)
        try:
            yield
        finally:
            await state["redis"].aclose()
            await state["pool"].close()

    @get("/internal/metadata/oauth-protected-resource", include_in_schema=False)
    async def internal_prm(request: Request) -> Response[bytes]:
        expected = settings.internal_token
        if not expected or not same(request.headers.get("authorization", ""), f"Bearer {expected}"):
            raise NotFoundError("not found")
        return Response(msgspec.json.encode(protected_resource_metadata(settings)), media_type="application/json")

    async def check_postgres() -> None:
        await state["pool"].fetchval("SELECT 1")

    async def check_redis() -> None:
        await state["redis"].ping()

    return Litestar(
        route_handlers=[internal_prm, *health_handlers({"postgres": check_postgres, "redis": check_redis})],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[RequestIdMiddleware],
        logging_config=None,
        lifespan=[lifespan],
    )
