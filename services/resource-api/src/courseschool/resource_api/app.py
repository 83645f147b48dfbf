"""The resource API's composition root: the Litestar app, its routes (made from the
area declarations), and the `ResourceService` built once at start-up and handed to
every handler by dependency injection, with the guarded caller."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import httpx
from litestar import Litestar
from litestar.di import Provide
from redis.asyncio import Redis

from courseschool.common.clock import Clock, SystemClock
from courseschool.common.db import backing_services
from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.metrics import REVOCATION_FEED
from courseschool.common.resource import canonical_resource
from courseschool.common.web import forward_request_id, service_app

from .activity import ActivityJob, ReadBuffer, ReadCounter
from .auth.revocation_feed import RevocationSource
from .auth.verifier import BearerVerifier, Introspector, JwksCache
from .schools import SchoolDirectory
from .service import ResourceService
from .settings import ResourceSettings
from .storage.activity import PgActivityStore
from .storage.schools import PgSchoolStore
from .web.internal import internal_router
from .web.principal import provide_principal, provide_resources, require_declared_scopes
from .web.routes import all_routes

MIGRATIONS = Path(__file__).parent / "migrations"


def create_app(
    settings: ResourceSettings, *, authz: httpx.AsyncClient | None = None, clock: Clock | None = None
) -> Litestar:
    """`authz` reaches the authorization server (JWKS, introspection, schools); by
    default over HTTP at AUTHZ_INTERNAL_URL, in the all-in-one process straight to its app."""
    now: Clock = clock or SystemClock()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with backing_services(settings, "resource_api") as (pool, redis), _running(app, pool, redis):
            yield

    @asynccontextmanager
    async def _running(app: Litestar, pool: asyncpg.Pool, redis: Redis) -> AsyncIterator[None]:
        http = authz or httpx.AsyncClient(
            base_url=settings.authz_internal_url, event_hooks={"request": [forward_request_id]}
        )
        verifier = BearerVerifier(
            mode=settings.token_validation,
            issuer=settings.issuer,
            audience=canonical_resource(settings.base_url) or settings.base_url,
            leeway=settings.token_leeway,
            jwks=JwksCache(http, refetch_interval=settings.jwks_refetch_interval, max_age=settings.jwks_max_age),
            introspector=Introspector(http, settings.rs_client_id, settings.rs_client_secret),
            redis=redis,
            cache_ttl=settings.introspection_cache_ttl,
            dpop=DpopChecker(RedisDpopStore(redis, DPOP_KEYS, clock=now), settings.dpop_policy, now),
            clock=now,
            revocations=RevocationSource(http, settings.internal_token) if settings.internal_token else None,
        )
        verifier.feed.start()
        feed = verifier.feed
        REVOCATION_FEED.labels("resource_api").set_function(lambda: float(feed.healthy))  # read at each scrape
        schools = SchoolDirectory(PgSchoolStore(pool), http, settings.internal_token)
        reads = ReadCounter(now)
        store = PgActivityStore(pool)
        activity = ActivityJob(
            reads,
            ReadBuffer(redis, store, batch=settings.activity_flush_batch),
            store,
            interval=settings.activity_flush_interval,
            retention_days=settings.activity_retention_days,
            housekeeping_interval=settings.housekeeping_interval,
            batch=settings.activity_flush_batch,
        )
        app.state.resources = ResourceService(settings, pool, verifier, schools, reads)
        app.state.activity = activity
        app.state.redis = redis
        activity.start()
        try:
            yield
        finally:
            await asyncio.gather(activity.stop(), verifier.feed.stop())  # at once, each within its bound
            if authz is None:
                await http.aclose()

    async def check_postgres() -> None:
        await app.state.resources.pool.fetchval("SELECT 1")

    async def check_redis() -> None:
        await app.state.redis.ping()

    app = service_app(
        "resource_api",
        route_handlers=[*all_routes(), internal_router(settings, now)],
        ready_checks={"postgres": check_postgres, "redis": check_redis},
        dependencies={
            "resources": Provide(provide_resources, sync_to_thread=False),
            "principal": Provide(provide_principal),
            "clock": Provide(lambda: now, use_cache=True, sync_to_thread=False),
        },
        lifespan=[lifespan],
        request_max_body_size=settings.upload_max_bytes + 64 * 1024,
    )
    require_declared_scopes(app)
    return app
