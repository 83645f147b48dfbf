"""The authorization server's composition roots. `Components` (the server, started and
closed by app.py's lifespan) builds the shared pieces once (stores over the pool and
Redis, the clock, the signing keys) and the families of families.py from them, each
handed to its handlers by dependency injection; `AdminComponents` (the admin CLI)
builds only `Administration`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import asyncpg
import httpx
import redis.asyncio as aioredis

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.jose import KeyEncryptor, decode_kek
from courseschool.common.resource import canonical_resource
from courseschool.common.row_cache import RowCache

from .activity import ActivityReader
from .events import EventRecorder
from .families import AccountPages, Administration, Internal, Registration, SignInPages, Tokens
from .keys import KeyChangeFeed, SigningKeys
from .limits import Limits
from .maintenance import Maintenance
from .passwords import PasswordWork
from .protocol.key_rotation import RotationPolicy
from .protocol.models import Client
from .protocol.tokens import TokenPolicy
from .settings import AuthzSettings
from .storage.admin import PgAdminStore
from .storage.client_directory import ClientDirectory
from .storage.client_metadata import PUBLIC_WEB, DocumentWeb, MetadataDocumentFetcher
from .storage.clients import CHANGES as CLIENT_CHANGES
from .storage.clients import PgClientStore
from .storage.codes import PgCodeStore
from .storage.connected_apps import PgConnectedAppStore
from .storage.consents import PgConsentStore
from .storage.events import PgEventStore
from .storage.grants import PgGrantStore
from .storage.housekeeping import Lifetimes, PgHousekeeping
from .storage.interactions import RedisInteractionStore
from .storage.keys import PgKeyStore
from .storage.notices import PgNoticeStore
from .storage.revocations import PgRedisRevoker
from .storage.school_apps import PgSchoolAppStore
from .storage.sessions import PgSessionStore
from .storage.trusted_domains import PgTrustedDomainStore
from .storage.users import PgUserStore
from .webhook import WebhookDelivery


@dataclass(frozen=True, kw_only=True, slots=True)
class _Stores:
    """What both roots share: the stores administration works with, and what they need."""

    settings: AuthzSettings
    clock: Clock
    pool: asyncpg.Pool
    redis: aioredis.Redis
    client_cache: RowCache[Client]  # closed by the root
    clients: PgClientStore
    users: PgUserStore
    grants: PgGrantStore
    revoker: PgRedisRevoker
    admin_store: PgAdminStore
    trusted_domains: PgTrustedDomainStore
    events: EventRecorder
    event_store: PgEventStore
    passwords: PasswordWork  # closed by the root
    key_store: PgKeyStore  # nothing is read from it until asked

    @classmethod
    def build(cls, settings: AuthzSettings, pool: asyncpg.Pool, redis: aioredis.Redis, clock: Clock) -> _Stores:
        kek, database_url = _required(settings)
        client_cache: RowCache[Client] = RowCache(database_url, CLIENT_CHANGES)
        clients = PgClientStore(pool, client_cache)
        event_store = PgEventStore(pool, webhook=settings.events_webhook_url is not None)
        return cls(
            settings=settings,
            clock=clock,
            pool=pool,
            redis=redis,
            client_cache=client_cache,
            clients=clients,
            users=PgUserStore(pool),
            grants=PgGrantStore(pool),
            revoker=PgRedisRevoker(pool, redis, access_token_ttl=settings.access_token_ttl, clock=clock),
            admin_store=PgAdminStore(pool, clients, clock),
            trusted_domains=PgTrustedDomainStore(pool),
            events=EventRecorder(event_store, clock),
            event_store=event_store,
            passwords=PasswordWork(
                workers=settings.password_hash_workers or os.cpu_count() or 1, queue=settings.password_hash_queue
            ),
            key_store=_key_store(settings, pool, kek, clock),
        )

    def administration(self, keys_rotated: Callable[[], Awaitable[object]]) -> Administration:
        return Administration(
            settings=self.settings,
            clock=self.clock,
            redis=self.redis,
            admin_store=self.admin_store,
            clients=self.clients,
            users=self.users,
            grants=self.grants,
            revoker=self.revoker,
            passwords=self.passwords,
            trusted_domains=self.trusted_domains,
            events=self.events,
            event_store=self.event_store,
            keys=self.key_store,
            keys_rotated=keys_rotated,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class AdminComponents:
    """The admin CLI's root: administration only. No signing key is loaded (nor made):
    a rotation takes the steps that are due and tells the running servers."""

    administration: Administration
    client_cache: RowCache[Client]

    @classmethod
    def build(cls, settings: AuthzSettings, pool: asyncpg.Pool, redis: aioredis.Redis, clock: Clock) -> AdminComponents:
        stores = _Stores.build(settings, pool, redis, clock)
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
    housekeeping: PgHousekeeping
    # Stores tests and the maintenance loop reach for by name.
    revoker: PgRedisRevoker
    admin_store: PgAdminStore
    trusted_domains: PgTrustedDomainStore
    # The families, each given to its handlers.
    tokens: Tokens
    sign_in: SignInPages
    account: AccountPages
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
        s = _Stores.build(settings, pool, redis, clock)
        fetcher = MetadataDocumentFetcher(settings, redis, document_web) if settings.cimd_enabled else None
        directory = ClientDirectory(s.clients, fetcher, clock, s.trusted_domains)
        keys = SigningKeys(s.key_store)
        limits = Limits(settings, redis)
        sessions = PgSessionStore(pool, clock)
        notices = PgNoticeStore(pool)
        school_apps = PgSchoolAppStore(pool)
        activity = ActivityReader(resource, settings.internal_token)
        default_resource, known_resources = _resources(settings)
        page_key = _page_key(settings)
        return cls(
            settings=settings,
            clock=clock,
            pool=pool,
            redis=redis,
            client_cache=s.client_cache,
            fetcher=fetcher,
            activity=activity,
            passwords=s.passwords,
            keys=keys,
            events=s.events,
            webhook=WebhookDelivery(settings, pool, clock) if settings.events_webhook_url else None,
            housekeeping=_housekeeping(settings, pool, clock),
            revoker=s.revoker,
            admin_store=s.admin_store,
            trusted_domains=s.trusted_domains,
            tokens=Tokens(
                settings=settings,
                clock=clock,
                pool=pool,
                users=s.users,
                codes=PgCodeStore(pool),
                grants=s.grants,
                revoker=s.revoker,
                keys=keys,
                policy=TokenPolicy(
                    issuer=settings.issuer,
                    access_token_ttl=settings.access_token_ttl,
                    id_token_ttl=settings.id_token_ttl,
                ),
                directory=directory,
                dpop=DpopChecker(RedisDpopStore(redis, DPOP_KEYS, clock=clock), settings.dpop_policy, clock),
                limits=limits,
            ),
            sign_in=SignInPages(
                settings=settings,
                clock=clock,
                limits=limits,
                passwords=s.passwords,
                directory=directory,
                fetcher=fetcher,
                clients=s.clients,
                keys=keys,
                interactions=RedisInteractionStore(redis, settings.interaction_ttl),
                sessions=sessions,
                users=s.users,
                consents=PgConsentStore(pool, clock),
                grants=s.grants,
                notices=notices,
                school_apps=school_apps,
                default_resource=default_resource,
                known_resources=known_resources,
                page_key=page_key,
            ),
            account=AccountPages(
                settings=settings,
                clock=clock,
                sessions=sessions,
                users=s.users,
                notices=notices,
                connected_apps=PgConnectedAppStore(pool),
                school_apps=school_apps,
                grants=s.grants,
                revoker=s.revoker,
                admin_store=s.admin_store,
                directory=directory,
                activity=activity,
                page_key=page_key,
            ),
            registration=Registration(
                settings=settings,
                clock=clock,
                limits=limits,
                clients=s.clients,
                admin_store=s.admin_store,
                revoker=s.revoker,
            ),
            administration=s.administration(keys.maintain),
            internal=Internal(settings=settings, revoker=s.revoker, admin_store=s.admin_store),
        )

    async def start(self) -> None:
        """Load the signing keys (Postgres down: the maintenance loop loads them later),
        then start the background loops: the events recorder, the webhook's delivery,
        maintenance (maintenance.py) and the key change feed (keys.py)."""
        await self.keys.start()
        assert self.settings.redis_url  # backing_services refuses to start without it
        self._loops.extend([Maintenance(self), KeyChangeFeed(self.keys, self.settings.redis_url)])
        self.events.start()
        if self.webhook is not None:
            self.webhook.start()
        for loop in self._loops:
            loop.start()

    async def close(self) -> None:
        """Stop the loops, at once (each has its bound, and the worker's shutdown has its
        own), then close what the root opened."""
        loops: list[BackgroundLoop] = [*self._loops, self.events, *([self.webhook] if self.webhook else [])]
        await asyncio.gather(*(loop.stop() for loop in loops))
        self._loops.clear()
        await self.activity.aclose()
        self.passwords.close()
        await self.client_cache.close()
        if self.fetcher is not None:
            await self.fetcher.aclose()


def _key_store(settings: AuthzSettings, pool: asyncpg.Pool, kek: bytes, clock: Clock) -> PgKeyStore:
    """The signing keys' store: sealed with the key-encryption key, rotated by the policy."""
    rotation = RotationPolicy(
        interval=settings.key_rotation_interval,
        lead=settings.key_publish_lead,
        retire_after=max(settings.access_token_ttl, settings.id_token_ttl) + 300,
    )
    return PgKeyStore(pool, KeyEncryptor(kek), issuer=settings.issuer, clock=clock, policy=rotation)


def _housekeeping(settings: AuthzSettings, pool: asyncpg.Pool, clock: Clock) -> PgHousekeeping:
    lifetimes = Lifetimes(
        refresh_idle=settings.refresh_token_idle_ttl,
        refresh_absolute=settings.refresh_token_absolute_ttl,
        revoked_grant_retention=settings.revoked_grant_retention,
        event_retention=settings.event_retention,
    )
    return PgHousekeeping(
        pool, lifetimes, clock=clock, batch=settings.housekeeping_batch, rounds=settings.housekeeping_rounds
    )


def _page_key(settings: AuthzSettings) -> bytes:
    """MACs the CSRF tokens of forms bound to a session (web/page_forms.py)."""
    kek, _ = _required(settings)
    return hmac.new(kek, b"courseschool page forms", hashlib.sha256).digest()


def _resources(settings: AuthzSettings) -> tuple[str, frozenset[str]]:
    """The default resource (the API at BASE_URL) and every resource tokens may be for."""
    default = canonical_resource(settings.base_url) or settings.base_url
    extra = {canonical_resource(r) for r in settings.extra_resources.split()}
    return default, frozenset({default, *(r for r in extra if r)})


def _required(settings: AuthzSettings) -> tuple[bytes, str]:
    """The key-encryption key (decoded) and the database URL, which nothing runs without."""
    if not settings.key_encryption_key:
        raise ValueError("KEY_ENCRYPTION_KEY is required")
    if not settings.database_url:
        raise ValueError("DATABASE_URL is required")
    return decode_kek(settings.key_encryption_key), settings.database_url
