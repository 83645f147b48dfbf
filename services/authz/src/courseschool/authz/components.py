"""The authorization server's composition roots. `Components` (the server, started and closed
by app.py's lifespan) builds the shared pieces once (stores over the pool and Redis, the
clock, the signing keys) and the families of families.py from them, each handed to its
handlers by dependency injection; `AdminComponents` (the admin CLI): `Administration` only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial

import asyncpg
import httpx
import redis.asyncio as aioredis

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.origins import ClientOrigins
from courseschool.common.row_cache import RowCache

from .activity import ActivityReader
from .events import EventRecorder
from .families import AccountPages, Administration, Internal, Registration, SignInPages, Tokens
from .keys import KeyChangeFeed, SigningKeys
from .mail.delivery import MailDelivery
from .maintenance import Maintenance, housekeeping
from .passwords import PasswordWork
from .protocol.models import Client
from .served import Served
from .settings import AuthzSettings
from .shared import Shared
from .storage.admin import PgAdminStore
from .storage.client_metadata import PUBLIC_WEB, DocumentWeb, MetadataDocumentFetcher
from .storage.client_origins import PgClientOriginStore
from .storage.housekeeping import PgHousekeeping
from .storage.revocations import PgRedisRevoker
from .storage.trusted_domains import PgTrustedDomainStore
from .webhook import WebhookDelivery


@dataclass(frozen=True, kw_only=True, slots=True)
class AdminComponents:
    """The admin CLI's root: administration only. No signing key is loaded (nor made):
    a rotation takes the steps that are due and tells the running servers."""

    administration: Administration
    client_cache: RowCache[Client]

    @classmethod
    def build(cls, settings: AuthzSettings, pool: asyncpg.Pool, redis: aioredis.Redis, clock: Clock) -> AdminComponents:
        stores = Shared.build(settings, pool, redis, clock)
        return cls(administration=stores.administration(stores.key_store.maintain), client_cache=stores.client_cache)

    def start(self) -> None:
        self.administration.events.start()

    async def close(self) -> None:
        """The events recorded written; the webhook is the running servers' to deliver."""
        await self.administration.events.stop()
        self.administration.passwords.close()
        await self.client_cache.close()


@dataclass(frozen=True, kw_only=True, slots=True)
class Components:
    """The server's root: the shared pieces, built once, and the families made of them.
    `start` starts what runs in the background, `close` stops it and closes what was
    opened (the pool and Redis are the caller's)."""

    settings: AuthzSettings
    clock: Clock
    pool: asyncpg.Pool
    redis: aioredis.Redis
    client_cache: RowCache[Client]
    fetcher: MetadataDocumentFetcher | None
    activity: ActivityReader
    passwords: PasswordWork
    keys: SigningKeys
    events: EventRecorder  # every audit event, kept in `authz_events`
    webhook: WebhookDelivery | None  # EVENTS_WEBHOOK_URL set: its delivery task
    mail: MailDelivery | None  # SMTP_URL set: the mail outbox's delivery task
    housekeeping: PgHousekeeping
    client_origins: ClientOrigins  # the registered origins browsers may call from (common/cors.py)
    # Stores tests and the maintenance loop reach for by name.
    revoker: PgRedisRevoker
    admin_store: PgAdminStore
    trusted_domains: PgTrustedDomainStore
    # The families, each given to its handlers.
    tokens: Tokens
    sign_in_pages: SignInPages
    account_pages: AccountPages
    registration: Registration
    administration: Administration
    internal: Internal
    _loops: list[BackgroundLoop] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        settings: AuthzSettings,
        pool: asyncpg.Pool,
        redis: aioredis.Redis,
        clock: Clock,
        *,
        resource: httpx.AsyncClient | None = None,
        document_web: DocumentWeb = PUBLIC_WEB,
    ) -> Components:
        """`resource`: how to reach the resource API's internal endpoints (activity);
        None: nothing to show of what apps did. `document_web`: where Client ID Metadata
        Documents are fetched from (the public web)."""
        s = Shared.build(settings, pool, redis, clock)
        w = Served.build(s, resource, document_web)
        origin_store = PgClientOriginStore(pool)
        return cls(
            settings=settings,
            clock=clock,
            pool=pool,
            redis=redis,
            client_cache=s.client_cache,
            fetcher=w.fetcher,
            activity=w.activity,
            passwords=s.passwords,
            keys=w.keys,
            events=s.events,
            webhook=WebhookDelivery(settings, pool, clock) if settings.events_webhook_url else None,
            mail=MailDelivery(settings, pool, clock) if settings.smtp_url else None,
            housekeeping=PgHousekeeping.configured(settings, pool, clock),
            client_origins=ClientOrigins(origin_store.origins),
            revoker=s.revoker,
            admin_store=s.admin_store,
            trusted_domains=s.trusted_domains,
            tokens=w.tokens(),
            sign_in_pages=w.sign_in_pages(),
            account_pages=w.account_pages(),
            registration=Registration(
                settings=settings,
                clock=clock,
                limits=w.limits,
                clients=s.clients,
                admin_store=s.admin_store,
                revoker=s.revoker,
            ),
            administration=s.administration(w.keys.maintain),
            internal=Internal(
                settings=settings, revoker=s.revoker, admin_store=s.admin_store, client_origins=origin_store
            ),
        )

    async def start(self) -> None:
        """Load the signing keys (Postgres down: the maintenance loop loads them later),
        then start the background loops: the events recorder, the webhook's and the
        mail's deliveries, maintenance (maintenance.py) and the key change feed (keys.py)."""
        await self.keys.start()
        maintenance = Maintenance(
            self.keys,
            partial(housekeeping, self),
            self.administration,
            key_reload_interval=self.settings.key_reload_interval,
            housekeeping_interval=self.settings.housekeeping_interval,
        )
        self._loops.extend([maintenance, KeyChangeFeed(self.keys, self.settings)])
        self.events.start()
        for loop in [*self._deliveries(), *self._loops]:
            loop.start()

    @property
    def key_feed(self) -> KeyChangeFeed | None:
        """The announced key changes this process follows (from `start`)."""
        return next((loop for loop in self._loops if isinstance(loop, KeyChangeFeed)), None)

    async def close(self) -> None:
        """Stop the loops, at once (each has its bound, and the worker's shutdown has its
        own), then close what the root opened."""
        loops: list[BackgroundLoop] = [*self._loops, self.events, *self._deliveries()]
        await asyncio.gather(*(loop.stop() for loop in loops))
        self._loops.clear()
        self.passwords.close()
        await self.client_cache.close()
        if self.fetcher is not None:
            await self.fetcher.aclose()

    def _deliveries(self) -> list[BackgroundLoop]:
        return [loop for loop in (self.webhook, self.mail) if loop is not None]
