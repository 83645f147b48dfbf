"""What only the server builds, beside the shared pieces (shared.py), and more than one
of its families is given: the families of families.py are made here, for the server's
root (components.py)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

import httpx

from courseschool.common.dpop import DpopChecker
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore

from .activity import ActivityReader
from .families import AccountPages, SignInPages, Tokens
from .keys import SigningKeys
from .limits import Limits
from .protocol.tokens import TokenPolicy
from .settings import resources
from .shared import Shared, required
from .storage.access_requests import PgAccessRequestStore
from .storage.client_directory import ClientDirectory
from .storage.client_metadata import DocumentWeb, MetadataDocumentFetcher
from .storage.codes import PgCodeStore
from .storage.connected_apps import PgConnectedAppStore
from .storage.consents import PgConsentStore
from .storage.held_links import RedisHeldLinks
from .storage.interactions import RedisInteractionStore
from .storage.mail_outbox import PgMailOutbox
from .storage.notices import PgNoticeStore
from .storage.passkeys import Passkeys
from .storage.school_apps import PgSchoolAppStore
from .storage.second_step import RedisSecondStepStore
from .storage.sessions import PgSessionStore


@dataclass(frozen=True, kw_only=True, slots=True)
class Served:
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
    def build(cls, s: Shared, resource: httpx.AsyncClient | None, document_web: DocumentWeb) -> Served:
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
            mail=self.mail,
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
            held_links=RedisHeldLinks(s.redis, s.settings.interaction_ttl),
            passwords=s.passwords,
            limits=self.limits,
        )
