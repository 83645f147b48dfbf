"""What the resource API's handlers work with, built once per process by the
composition root (`app.py`) from the settings, the PostgreSQL pool, Redis and the way
to the authorization server, kept on `app.state.resource_api` and handed to each
handler by dependency injection, piece by piece (`web/dependencies.py`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import asyncpg
import httpx
import redis.asyncio as aioredis

from courseschool.common.clock import Clock
from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.metrics import REVOCATION_FEED
from courseschool.common.origins import ClientOrigins
from courseschool.common.resource import canonical_resource

from .activity import ActivityJob, ReadBuffer, ReadCounter
from .auth.revocation_feed import RevocationSource
from .auth.verifier import BearerVerifier, Introspector, JwksCache
from .catalogue import CatalogueCache
from .client_origins import client_origins
from .schools import SchoolDirectory
from .service import ResourceService
from .settings import ResourceSettings
from .singletons import Singletons
from .storage.activity import PgActivityStore
from .storage.files import PgFileStore
from .storage.items import PgItemStore
from .storage.revocations import PgRevocationRecord
from .storage.schools import PgSchoolStore


@dataclass(frozen=True, kw_only=True, slots=True)
class Components:
    settings: ResourceSettings
    clock: Clock
    pool: asyncpg.Pool
    redis: aioredis.Redis
    verifier: BearerVerifier  # the bearer check, with its revocation feed (started with the app)
    resources: ResourceService  # collections, analytics, uploads
    singletons: Singletons
    catalogue: CatalogueCache  # anonymous catalogue pages (web/catalogue_hits.py sends them)
    activity_store: PgActivityStore  # the activity summary (`/internal/activity`)
    activity: ActivityJob  # the reads' flush and the retention (started with the app)
    client_origins: ClientOrigins  # the registered origins browsers may call from (common/cors.py)

    @classmethod
    def build(
        cls,
        settings: ResourceSettings,
        pool: asyncpg.Pool,
        redis: aioredis.Redis,
        clock: Clock,
        authz: httpx.AsyncClient,
    ) -> Components:
        """`authz`: how to reach the authorization server (JWKS, introspection, the
        revocations and the schools it owns)."""
        reads = ReadCounter(clock)
        items = PgItemStore(pool)
        schools = SchoolDirectory(PgSchoolStore(pool), authz, settings.internal_token)
        catalogue = CatalogueCache(settings.catalogue_cache_ttl)
        activity_store = PgActivityStore(pool)
        return cls(
            settings=settings,
            clock=clock,
            pool=pool,
            redis=redis,
            verifier=_verifier(settings, pool, redis, clock, authz),
            resources=ResourceService(pool, items, PgFileStore(pool), schools, reads, catalogue),
            singletons=Singletons(items, schools, reads),
            catalogue=catalogue,
            activity_store=activity_store,
            activity=ActivityJob(
                reads,
                ReadBuffer(redis, activity_store, batch=settings.activity_flush_batch),
                activity_store,
                interval=settings.activity_flush_interval,
                retention_days=settings.activity_retention_days,
                housekeeping_interval=settings.housekeeping_interval,
                batch=settings.activity_flush_batch,
            ),
            client_origins=client_origins(authz, settings.internal_token),
        )

    def start(self) -> None:
        """The background loops: the revocation feed and the activity's flush."""
        feed = self.verifier.feed
        feed.start()
        REVOCATION_FEED.labels("resource_api").set_function(lambda: float(feed.healthy))  # read at each scrape
        self.activity.start()

    async def close(self) -> None:
        """The loops, at once, each within its bound (common/background.py)."""
        await asyncio.gather(self.activity.stop(), self.verifier.feed.stop())


def _verifier(
    settings: ResourceSettings, pool: asyncpg.Pool, redis: aioredis.Redis, clock: Clock, authz: httpx.AsyncClient
) -> BearerVerifier:
    return BearerVerifier(
        mode=settings.token_validation,
        issuer=settings.issuer,
        audience=canonical_resource(settings.base_url) or settings.base_url,
        leeway=settings.token_leeway,
        jwks=JwksCache(authz, refetch_interval=settings.jwks_refetch_interval, max_age=settings.jwks_max_age),
        introspector=Introspector(authz, settings.rs_client_id, settings.rs_client_secret),
        redis=redis,
        cache_ttl=settings.introspection_cache_ttl,
        dpop=DpopChecker(RedisDpopStore(redis, DPOP_KEYS, clock=clock), settings.dpop_policy, clock),
        clock=clock,
        revocations=RevocationSource(authz, settings.internal_token) if settings.internal_token else None,
        record=PgRevocationRecord(pool),
    )
