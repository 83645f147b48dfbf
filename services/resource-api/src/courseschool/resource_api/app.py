"""The resource API's Litestar application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
from litestar import Litestar, Request, Response, get
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from courseschool.common.db import create_pool
from courseschool.common.errors import NotFoundError
from courseschool.common.redis import create_redis
from courseschool.common.resource import canonical_resource
from courseschool.common.secrets import same
from courseschool.common.metrics import unwatch_pool, watch_pool
from courseschool.common.web import forward_request_id, service_app

from .bearer import BearerVerifier, Clock, Introspector, JwksCache, RevocationSource
from .metadata import protected_resource_metadata
from .openapi import resource_openapi
from .service import ResourceService
from .settings import ResourceSettings
from .web.routes import all_routes

MIGRATIONS = Path(__file__).parent / "migrations"


def create_app(
    settings: ResourceSettings, *, authz: httpx.AsyncClient | None = None, clock: Clock | None = None
) -> Litestar:
    """`authz` reaches the authorization server (JWKS, introspection); by default over
    HTTP at AUTHZ_INTERNAL_URL, in the all-in-one process straight to its app."""
    holder: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        if not settings.database_url or not settings.redis_url:
            raise RuntimeError("DATABASE_URL and REDIS_URL are required")
        pool = await create_pool(settings.database_url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
        redis = create_redis(settings.redis_url)
        http = authz or httpx.AsyncClient(
            base_url=settings.authz_internal_url, event_hooks={"request": [forward_request_id]}
        )
        verifier = BearerVerifier(
            mode=settings.token_validation, issuer=settings.issuer,
            audience=canonical_resource(settings.base_url) or settings.base_url, leeway=settings.token_leeway,
            jwks=JwksCache(http, refetch_interval=settings.jwks_refetch_interval, max_age=settings.jwks_max_age),
            introspector=Introspector(http, settings.rs_client_id, settings.rs_client_secret),
            redis=redis, cache_ttl=settings.introspection_cache_ttl, clock=clock,
            revocations=RevocationSource(http, settings.internal_token) if settings.internal_token else None,
        )
        verifier.feed.start()
        watch_pool("resource_api", pool)
        holder["service"] = ResourceService(settings, pool, verifier)
        try:
            yield
        finally:
            unwatch_pool("resource_api")
            await verifier.feed.stop()
            holder.clear()
            if authz is None:
                await http.aclose()
            await redis.aclose()
            await pool.close()

    def check_internal(request: Request) -> None:
        expected = settings.internal_token
        if not expected or not same(request.headers.get("authorization", ""), f"Bearer {expected}"):
            raise NotFoundError("not found")

    @get("/internal/metadata/oauth-protected-resource", include_in_schema=False)
    async def internal_prm(request: Request) -> Response[bytes]:
        check_internal(request)
        return Response(msgspec.json.encode(protected_resource_metadata(settings)), media_type="application/json")

    @get("/internal/openapi.json", include_in_schema=False)
    async def internal_openapi(request: Request) -> Response[bytes]:
        check_internal(request)
        body = msgspec.json.encode(resource_openapi(settings.base_url, settings.resource_name))
        return Response(body, media_type="application/json")

    def provide_service() -> ResourceService:
        return holder["service"]

    async def check_postgres() -> None:
        await holder["service"].pool.fetchval("SELECT 1")

    async def check_redis() -> None:
        await holder["service"].verifier.feed._redis.ping()

    app = service_app(
        "resource_api",
        route_handlers=[*all_routes(), internal_prm, internal_openapi],
        ready_checks={"postgres": check_postgres, "redis": check_redis},
        dependencies={"resources": Provide(provide_service, sync_to_thread=False)},
        lifespan=[lifespan],
        request_max_body_size=settings.upload_max_bytes + 64 * 1024,
        openapi_config=OpenAPIConfig(title=settings.resource_name, version="1.0.0", path="/api/v1/schema"),
    )
    app.state.holder = holder
    return app
