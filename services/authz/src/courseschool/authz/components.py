"""What the authorization server's use cases work with, built once per process by
the composition root (`app.py`) and handed to the handlers by dependency injection."""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

import asyncpg
import httpx
import redis.asyncio as aioredis

from courseschool.common.clock import Clock
from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.jose import KeyEncryptor, decode_kek
from courseschool.common.resource import canonical_resource
from courseschool.common.row_cache import RowCache

from .activity import ActivityReader
from .events import EventRecorder
from .keys import SigningKeys
from .limits import Limits
from .passwords import PasswordWork
from .protocol.context import TokenContext
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
class Components:
    settings: AuthzSettings
    clock: Clock
    pool: asyncpg.Pool
    redis: aioredis.Redis
    clients: PgClientStore
    client_cache: RowCache[Client]  # closed with the app
    fetcher: MetadataDocumentFetcher | None
    directory: ClientDirectory  # every lookup of a client by id (both kinds of client)
    trusted_domains: PgTrustedDomainStore  # hosts whose metadata documents may list https callbacks
    users: PgUserStore
    grants: PgGrantStore
    codes: PgCodeStore
    connected_apps: PgConnectedAppStore  # what a person holds (their connected-apps page)
    sessions: PgSessionStore
    consents: PgConsentStore
    admin_store: PgAdminStore
    events: EventRecorder  # every audit event, kept in `authz_events` (started with the app)
    event_store: PgEventStore
    notices: PgNoticeStore  # a new connection, told to its person once
    activity: ActivityReader  # what apps did, from the resource API (closed with the app)
    school_apps: PgSchoolAppStore  # the school's apps page: everyone's grants there, blocked apps
    webhook: WebhookDelivery | None  # EVENTS_WEBHOOK_URL set: its delivery task (started with the app)
    housekeeping: PgHousekeeping
    interactions: RedisInteractionStore
    keys: SigningKeys
    revoker: PgRedisRevoker
    limits: Limits
    passwords: PasswordWork  # hashing off the event loop, bounded
    dpop: DpopChecker  # DPoP proofs (RFC 9449) at the token endpoint and UserInfo
    policy: TokenPolicy
    default_resource: str
    known_resources: frozenset[str]
    page_key: bytes  # MACs the CSRF tokens of forms bound to a session (sign-out)

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
        None: nothing to show of what apps did (the admin CLI). `document_web`: where
        Client ID Metadata Documents are fetched from (the public web)."""
        kek, database_url = _required(settings)
        client_cache: RowCache[Client] = RowCache(database_url, CLIENT_CHANGES)
        clients = PgClientStore(pool, client_cache)
        fetcher = MetadataDocumentFetcher(settings, redis, document_web) if settings.cimd_enabled else None
        trusted_domains = PgTrustedDomainStore(pool)
        event_store = PgEventStore(pool, webhook=settings.events_webhook_url is not None)
        default_resource, known_resources = _resources(settings)
        return cls(
            settings=settings,
            clock=clock,
            pool=pool,
            redis=redis,
            clients=clients,
            client_cache=client_cache,
            fetcher=fetcher,
            directory=ClientDirectory(clients, fetcher, clock, trusted_domains),
            trusted_domains=trusted_domains,
            users=PgUserStore(pool),
            grants=PgGrantStore(pool),
            codes=PgCodeStore(pool),
            connected_apps=PgConnectedAppStore(pool),
            sessions=PgSessionStore(pool, clock),
            consents=PgConsentStore(pool, clock),
            admin_store=PgAdminStore(pool, clients, clock),
            events=EventRecorder(event_store, clock),
            event_store=event_store,
            notices=PgNoticeStore(pool),
            activity=ActivityReader(resource, settings.internal_token),
            school_apps=PgSchoolAppStore(pool),
            webhook=WebhookDelivery(settings, pool, clock) if settings.events_webhook_url else None,
            housekeeping=_housekeeping(settings, pool, clock),
            interactions=RedisInteractionStore(redis, settings.interaction_ttl),
            keys=SigningKeys(_key_store(settings, pool, kek, clock)),
            revoker=PgRedisRevoker(pool, redis, access_token_ttl=settings.access_token_ttl, clock=clock),
            limits=Limits(settings, redis),
            passwords=PasswordWork(
                workers=settings.password_hash_workers or os.cpu_count() or 1, queue=settings.password_hash_queue
            ),
            dpop=DpopChecker(RedisDpopStore(redis, DPOP_KEYS, clock=clock), settings.dpop_policy, clock),
            policy=TokenPolicy(
                issuer=settings.issuer, access_token_ttl=settings.access_token_ttl, id_token_ttl=settings.id_token_ttl
            ),
            default_resource=default_resource,
            known_resources=known_resources,
            page_key=hmac.new(kek, b"courseschool page forms", hashlib.sha256).digest(),
        )

    def token_context(self) -> TokenContext:
        """What the grant handlers, revocation and introspection need (protocol/context.py)."""
        ring = self.keys.ring
        return TokenContext(
            users=self.users,
            codes=self.codes,
            grants=self.grants,
            revoker=self.revoker,
            signer=ring,
            verifier=ring,
            policy=self.policy,
            clock=self.clock,
            refresh_idle_ttl=self.settings.refresh_token_idle_ttl,
            refresh_absolute_ttl=self.settings.refresh_token_absolute_ttl,
            refresh_grace=self.settings.refresh_token_grace,
            grants_per_app=self.settings.grants_per_app,
        )


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
