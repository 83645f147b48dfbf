"""The resource API's composition root: the Litestar app, its routes (made from the
area declarations), and the `Components` built once at start-up (components.py), whose
pieces every handler is given by dependency injection (web/dependencies.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from litestar import Litestar

from courseschool.common.clock import Clock, SystemClock
from courseschool.common.cors import CLIENT_ORIGINS, CorsRules
from courseschool.common.db import Folders, backing_services
from courseschool.common.origins import ClientOrigins
from courseschool.common.outbound import default_tls
from courseschool.common.schema import SchemaCheck
from courseschool.common.web import forward_request_id, service_app

from .components import Components
from .settings import ResourceSettings
from .web.dependencies import dependencies
from .web.internal import internal_router
from .web.principal import require_declared_scopes
from .web.routes import all_routes

MIGRATIONS = Path(__file__).parent / "migrations"


def _client_origins(app: Litestar) -> ClientOrigins | None:
    components: Components | None = app.state.get("resource_api")  # None before start-up
    return components.client_origins if components is not None else None


# Browsers of loopback and registered origins call the API (common/cors.py); /internal,
# the probes and /metrics stay same-origin.
CORS = CorsRules(prefixes={"/api/v1/": CLIENT_ORIGINS}, registered=lambda scope: _client_origins(scope["app"]))


def create_app(
    settings: ResourceSettings,
    *,
    authz: httpx.AsyncClient | None = None,
    clock: Clock | None = None,
    migrations: Folders = MIGRATIONS,
) -> Litestar:
    """`authz` reaches the authorization server (JWKS, introspection, schools); by
    default over HTTP at AUTHZ_INTERNAL_URL, in the all-in-one process straight to its app.
    `migrations`: the ones this code needs applied before it is ready (common/schema.py)."""
    now: Clock = clock or SystemClock()
    schema = SchemaCheck("resource_api", migrations)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with backing_services(settings, "resource_api") as (pool, redis):
            await schema.at_start(pool)
            http = authz or httpx.AsyncClient(
                base_url=settings.authz_internal_url,
                event_hooks={"request": [forward_request_id]},
                verify=default_tls(),
            )
            components = Components.build(settings, pool, redis, now, http)
            app.state.resource_api = components
            components.start()
            try:
                yield
            finally:
                await components.close()
                if authz is None:
                    await http.aclose()

    async def check_postgres() -> None:
        await app.state.resource_api.pool.fetchval("SELECT 1")

    async def check_redis() -> None:
        await app.state.resource_api.redis.ping()

    app = service_app(
        "resource_api",
        route_handlers=[*all_routes(), internal_router(settings, now)],
        ready_checks={
            "postgres": check_postgres,
            "redis": check_redis,
            "schema": lambda: schema(app.state.resource_api.pool),
        },
        dependencies=dependencies(now),
        lifespan=[lifespan],
        request_max_body_size=settings.upload_max_bytes + 64 * 1024,
        cors=CORS,
    )
    require_declared_scopes(app)
    return app
