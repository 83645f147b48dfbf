"""The authorization server's composition roots. `Components` (the server, started and closed
by app.py's lifespan) builds the shared pieces once (stores over the pool and Redis, the
clock, the signing keys) and the families of families.py from them, each handed to its
handlers by dependency injection; `AdminComponents` (the admin CLI): `Administration` only."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from dataclasses import dataclass, field
from functools import partial

import asyncpg
import httpx
import redis.asyncio as aioredis

from courseschool.common.background import BackgroundLoop
from courseschool.common.clock import Clock
from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.origins import ClientOrigins
from courseschool.common.row_cache import RowCache

from .activity import ActivityReader
from .events import EventRecorder
from .families import AccountPages, Administration, Internal, Registration, SignInPages, Tokens
from .keys import KeyChangeFeed, SigningKeys
from .limits import Limits
from .mail.delivery import MailDelivery
from .maintenance import Maintenance, housekeeping
from .passwords import PasswordWork
from .protocol.models import Client
from .protocol.tokens import TokenPolicy
from .settings import AuthzSettings, resources
from .shared import Shared, required
from .storage.access_requests import PgAccessRequestStore
from .storage.admin import PgAdminStore
from .storage.client_directory import ClientDirectory
from .storage.client_metadata import PUBLIC_WEB, DocumentWeb, MetadataDocumentFetcher
from .storage.client_origins import PgClientOriginStore
from .storage.codes import PgCodeStore
from .storage.connected_apps import PgConnectedAppStore
from .storage.consents import PgConsentStore
from .storage.housekeeping import PgHousekeeping
from .storage.interactions import RedisInteractionStore
from .storage.mail_outbox import PgMailOutbox
from .storage.notices import PgNoticeStore
from .storage.passkeys import Passkeys
from .storage.revocations import PgRedisRevoker
from .storage.school_apps import PgSchoolAppStore
from .storage.second_step import RedisSecondStepStore
from .storage.sessions import PgSessionStore
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
        s = Shared.build(settings, pool, redis, clock)
        w = _Served.build(s, resource, document_web)
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
            sign_in=w.sign_in_pages(),
            account=w.account_pages(),
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


@dataclass(frozen=True, kw_only=True, slots=True)
class _Served:
    """What only the server builds, beside the shared pieces, and more than one of its
    families is given: the families are made here."""

    s: Shared
    fetcher: MetadataDocumentFetcher | None
    directory: ClientDirectory
    keys: SigningKeys
    limits: Limits
    sessions: PgSessionStore
    notices: PgNoticeStore
    school_apps: PgSchoolAppStore
    access_requests: PgAccessRequestStore
    mail: PgMailOutbox
    activity: ActivityReader
    second_steps: RedisSecondStepStore
    passkeys: Passkeys
    page_key: bytes

    @classmethod
    def build(cls, s: Shared, resource: httpx.AsyncClient | None, document_web: DocumentWeb) -> _Served:
        settings, pool = s.settings, s.pool
        fetcher = MetadataDocumentFetcher(settings, s.redis, document_web) if settings.cimd_enabled else None
        kek, _ = required(settings)
        mail = settings.smtp_url is not None  # e-mail goes into the outbox
        return cls(
            s=s,
            fetcher=fetcher,
            directory=ClientDirectory(s.clients, fetcher, s.clock, s.trusted_domains),
            keys=SigningKeys(s.key_store),
            limits=Limits(settings, s.redis),
            sessions=PgSessionStore(pool, s.clock),
            notices=PgNoticeStore(pool, mail=mail),
            school_apps=PgSchoolAppStore(pool),
            access_requests=PgAccessRequestStore(pool, ttl=settings.access_request_ttl, mail=mail),
            mail=s.mail,
            activity=ActivityReader(resource, settings.internal_token),
            second_steps=RedisSecondStepStore(s.redis, settings.interaction_ttl),
            passkeys=Passkeys.build(pool, s.redis),
            page_key=hmac.new(kek, b"courseschool page forms", hashlib.sha256).digest(),
        )

    def tokens(self) -> Tokens:
        s = self.s
        return Tokens(
            settings=s.settings,
            clock=s.clock,
            pool=s.pool,
            users=s.users,
            codes=PgCodeStore(s.pool),
            grants=s.grants,
            revoker=s.revoker,
            keys=self.keys,
            policy=TokenPolicy(
                issuer=s.settings.issuer,
                access_token_ttl=s.settings.access_token_ttl,
                id_token_ttl=s.settings.id_token_ttl,
            ),
            directory=self.directory,
            dpop=DpopChecker(RedisDpopStore(s.redis, DPOP_KEYS, clock=s.clock), s.settings.dpop_policy, s.clock),
            limits=self.limits,
            school_apps=self.school_apps,
        )

    def sign_in_pages(self) -> SignInPages:
        s = self.s
        default_resource, known_resources = resources(s.settings)
        return SignInPages(
            settings=s.settings,
            clock=s.clock,
            limits=self.limits,
            passwords=s.passwords,
            directory=self.directory,
            fetcher=self.fetcher,
            clients=s.clients,
            keys=self.keys,
            interactions=RedisInteractionStore(s.redis, s.settings.interaction_ttl),
            sessions=self.sessions,
            users=s.users,
            consents=PgConsentStore(s.pool, s.clock),
            grants=s.grants,
            notices=self.notices,
            school_apps=self.school_apps,
            access_requests=self.access_requests,
            second_factors=s.second_factors,
            second_steps=self.second_steps,
            passkeys=self.passkeys,
            default_resource=default_resource,
            known_resources=known_resources,
            page_key=self.page_key,
        )

    def account_pages(self) -> AccountPages:
        s = self.s
        return AccountPages(
            settings=s.settings,
            clock=s.clock,
            sessions=self.sessions,
            users=s.users,
            notices=self.notices,
            connected_apps=PgConnectedAppStore(s.pool),
            school_apps=self.school_apps,
            access_requests=self.access_requests,
            mail=self.mail,
            grants=s.grants,
            revoker=s.revoker,
            admin_store=s.admin_store,
            directory=self.directory,
            activity=self.activity,
            second_factors=s.second_factors,
            second_steps=self.second_steps,
            passkeys=self.passkeys,
            page_key=self.page_key,
            links=s.links,
            passwords=s.passwords,
            limits=self.limits,
        )
