"""The pieces both composition roots build (components.py): the server's, and the admin
CLI's, which builds administration only. Building them reads nothing from the database
and loads no signing key."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg
import redis.asyncio as aioredis

from courseschool.common.clock import Clock
from courseschool.common.jose import KeyEncryptor, decode_kek
from courseschool.common.row_cache import RowCache

from .events import EventRecorder
from .families import Administration
from .passwords import PasswordWork, hasher
from .protocol.key_rotation import RotationPolicy
from .protocol.models import Client
from .settings import AuthzSettings
from .storage.account_links import PgAccountLinkStore
from .storage.admin import PgAdminStore
from .storage.clients import CHANGES as CLIENT_CHANGES
from .storage.clients import PgClientStore
from .storage.events import PgEventStore
from .storage.grants import PgGrantStore
from .storage.keys import PgKeyStore
from .storage.mail_outbox import PgMailOutbox
from .storage.revocations import PgRedisRevoker
from .storage.second_factors import PgSecondFactorStore
from .storage.trusted_domains import PgTrustedDomainStore
from .storage.users import PgUserStore


@dataclass(frozen=True, kw_only=True, slots=True)
class Shared:
    """What both roots build: the stores administration works with, and what they need."""

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
    second_factors: PgSecondFactorStore  # TOTP secrets sealed under the KEK, recovery codes' digests
    mail: PgMailOutbox  # e-mail to people (filled only with SMTP_URL set)
    links: PgAccountLinkStore  # invitations and password resets (their token sealed under the KEK)

    @classmethod
    def build(cls, settings: AuthzSettings, pool: asyncpg.Pool, redis: aioredis.Redis, clock: Clock) -> Shared:
        kek, database_url = required(settings)
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
                workers=settings.password_hash_workers or os.cpu_count() or 1,
                queue=settings.password_hash_queue,
                hasher=hasher(
                    time_cost=settings.password_time_cost,
                    memory_kib=settings.password_memory_kib,
                    parallelism=settings.password_parallelism,
                ),
            ),
            key_store=key_store(settings, pool, kek, clock),
            second_factors=second_factor_store(pool, kek),
            mail=PgMailOutbox(pool, enabled=settings.smtp_url is not None),
            links=PgAccountLinkStore(pool, KeyEncryptor(kek)),
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
            second_factors=self.second_factors,
            mail=self.mail,
            links=self.links,
        )


def second_factor_store(pool: asyncpg.Pool, kek: bytes) -> PgSecondFactorStore:
    """Second factors: TOTP secrets sealed with the key-encryption key, recovery codes
    digested under a key derived from it."""
    code_key = hmac.new(kek, b"courseschool recovery codes", hashlib.sha256).digest()
    return PgSecondFactorStore(pool, KeyEncryptor(kek), code_key)


def key_store(settings: AuthzSettings, pool: asyncpg.Pool, kek: bytes, clock: Clock) -> PgKeyStore:
    """The signing keys' store: sealed with the key-encryption key, rotated by the policy."""
    rotation = RotationPolicy(
        interval=settings.key_rotation_interval,
        lead=settings.key_publish_lead,
        retire_after=max(settings.access_token_ttl, settings.id_token_ttl) + 300,
    )
    return PgKeyStore(pool, KeyEncryptor(kek), issuer=settings.issuer, clock=clock, policy=rotation)


def required(settings: AuthzSettings) -> tuple[bytes, str]:
    """The key-encryption key (decoded) and the database URL, which nothing runs without."""
    if not settings.key_encryption_key:
        raise ValueError("KEY_ENCRYPTION_KEY is required")
    if not settings.database_url:
        raise ValueError("DATABASE_URL is required")
    return decode_kek(settings.key_encryption_key), settings.database_url
