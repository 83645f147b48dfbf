"""What each family of use cases is given: small frozen records, each holding only what
its handlers and use cases use, built once per process by the composition root
(`components.Components`, or `components.AdminComponents` for the admin CLI) and handed
to the handlers by dependency injection (web/http.py).

- `Tokens`: the token endpoint, revocation, introspection, UserInfo and the JWKS.
- `SignInPages`: authorization requests, the login and consent pages, the standalone
  sign-in page and sign-out.
- `AccountPages`: a signed-in person's account, connected apps and security, a
  school's apps page, and the pages of an e-mailed link (invitation, password reset).
- `Registration`: dynamic client registration and configuration (RFC 7591, RFC 7592).
- `Administration`: the internal admin API and the admin CLI.
- `Internal`: `/internal/*` for the other services.

Two kinds of use case are shared by families; each says by a protocol what it reads:
`Visitors` (who this browser is signed in as, the notices for them, the CSRF tokens of
the forms bound to their session) and `ClientRemoval` (deleting a client and ending its
grants)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import asyncpg
import redis.asyncio as aioredis

from courseschool.common.clock import Clock
from courseschool.common.dpop import DpopChecker

from .activity import ActivityReader
from .events import EventRecorder
from .keys import SigningKeys
from .limits import Limits
from .passwords import PasswordWork
from .protocol.context import TokenContext
from .protocol.tokens import TokenPolicy
from .settings import AuthzSettings
from .storage.access_requests import PgAccessRequestStore
from .storage.account_links import PgAccountLinkStore
from .storage.admin import PgAdminStore
from .storage.client_directory import ClientDirectory
from .storage.client_metadata import MetadataDocumentFetcher
from .storage.client_origins import PgClientOriginStore
from .storage.clients import PgClientStore
from .storage.codes import PgCodeStore
from .storage.connected_apps import PgConnectedAppStore
from .storage.consents import PgConsentStore
from .storage.events import PgEventStore
from .storage.grants import PgGrantStore
from .storage.held_links import RedisHeldLinks
from .storage.interactions import RedisInteractionStore
from .storage.keys import PgKeyStore
from .storage.mail_outbox import PgMailOutbox
from .storage.notices import PgNoticeStore
from .storage.passkeys import Passkeys
from .storage.revocations import PgRedisRevoker
from .storage.school_apps import PgSchoolAppStore
from .storage.second_factors import PgSecondFactorStore
from .storage.second_step import RedisSecondStepStore
from .storage.sessions import PgSessionStore
from .storage.trusted_domains import PgTrustedDomainStore
from .storage.users import PgUserStore


@dataclass(frozen=True, kw_only=True, slots=True)
class Tokens:
    settings: AuthzSettings
    clock: Clock
    pool: asyncpg.Pool  # a grant's statements run on one checkout of it (common.db.held)
    users: PgUserStore
    codes: PgCodeStore
    grants: PgGrantStore
    revoker: PgRedisRevoker
    keys: SigningKeys  # signs and verifies with the ring loaded now
    policy: TokenPolicy
    directory: ClientDirectory  # every lookup of a client by id (both kinds of client)
    dpop: DpopChecker  # DPoP proofs (RFC 9449) at the token endpoint and UserInfo
    limits: Limits
    school_apps: PgSchoolAppStore  # the blocks and the schools' app policies, checked where tokens are issued

    def token_context(self, *, ip: str | None = None) -> TokenContext:
        """What the grant handlers, revocation and introspection need (protocol/context.py);
        `ip`: the request's address."""
        ring = self.keys.ring
        return TokenContext(
            users=self.users,
            codes=self.codes,
            grants=self.grants,
            revoker=self.revoker,
            blocks=self.school_apps,
            policies=self.school_apps,
            signer=ring,
            verifier=ring,
            policy=self.policy,
            clock=self.clock,
            refresh_idle_ttl=self.settings.refresh_token_idle_ttl,
            refresh_absolute_ttl=self.settings.refresh_token_absolute_ttl,
            refresh_grace=self.settings.refresh_token_grace,
            grants_per_app=self.settings.grants_per_app,
            ip=ip,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SignInPages:
    settings: AuthzSettings
    clock: Clock
    limits: Limits
    passwords: PasswordWork  # hashing off the event loop, bounded
    directory: ClientDirectory
    fetcher: MetadataDocumentFetcher | None  # None: Client ID Metadata Documents are off
    clients: PgClientStore  # sign-out's post_logout_redirect_uri checks
    keys: SigningKeys  # sign-out's id_token_hint
    interactions: RedisInteractionStore
    sessions: PgSessionStore
    users: PgUserStore
    consents: PgConsentStore
    grants: PgGrantStore
    notices: PgNoticeStore  # a new connection, told to its person once
    school_apps: PgSchoolAppStore  # apps a school blocked, its app policy and approvals
    access_requests: PgAccessRequestStore  # people's requests for the school's approval
    second_factors: PgSecondFactorStore  # the second step of a sign-in, the school's requirement
    second_steps: RedisSecondStepStore  # sign-ins between the password and the code; codes shown once
    passkeys: Passkeys  # a passkey as the second step, or in place of the password
    mail: PgMailOutbox  # the person told of an authenticator app set up at sign-in
    default_resource: str
    known_resources: frozenset[str]
    page_key: bytes  # MACs the CSRF tokens of forms bound to a session (sign-out, sign-in)


@dataclass(frozen=True, kw_only=True, slots=True)
class AccountPages:
    settings: AuthzSettings
    clock: Clock
    sessions: PgSessionStore
    users: PgUserStore
    notices: PgNoticeStore
    connected_apps: PgConnectedAppStore  # what a person holds (their connected-apps page)
    school_apps: PgSchoolAppStore  # the school's apps page: everyone's grants there, blocks, policy, approvals
    access_requests: PgAccessRequestStore  # people's requests for the school's approval
    mail: PgMailOutbox  # the e-mail telling people what their school ended or blocked
    grants: PgGrantStore
    revoker: PgRedisRevoker
    admin_store: PgAdminStore  # every live grant of a person (remove all)
    directory: ClientDirectory
    activity: ActivityReader  # what apps did, from the resource API
    second_factors: PgSecondFactorStore  # the person's security page, the school's requirement
    second_steps: RedisSecondStepStore  # recovery codes shown once
    passkeys: Passkeys  # the person's passkeys: added, named, removed
    page_key: bytes
    links: PgAccountLinkStore  # invitations and password resets by e-mail
    held_links: RedisHeldLinks  # a link's token, held for the browser that opened it
    passwords: PasswordWork  # a new password hashed, the password re-entered checked
    limits: Limits  # "Forgot your password?" and a re-entered password, like a sign-in


@dataclass(frozen=True, kw_only=True, slots=True)
class Registration:
    settings: AuthzSettings
    clock: Clock
    limits: Limits
    clients: PgClientStore
    admin_store: PgAdminStore
    revoker: PgRedisRevoker


@dataclass(frozen=True, kw_only=True, slots=True)
class Administration:
    settings: AuthzSettings
    clock: Clock
    redis: aioredis.Redis  # announces a key rotation to every replica
    admin_store: PgAdminStore
    clients: PgClientStore
    users: PgUserStore
    grants: PgGrantStore
    revoker: PgRedisRevoker
    passwords: PasswordWork
    trusted_domains: PgTrustedDomainStore  # hosts whose metadata documents may list https callbacks
    events: EventRecorder  # flushed before an action answers
    event_store: PgEventStore
    keys: PgKeyStore  # the keys as stored: listed and rotated, never loaded to sign
    # After a rotation on demand: the server reloads the keys it signs with; the admin
    # CLI, which signs nothing, only takes the steps that are due.
    keys_rotated: Callable[[], Awaitable[object]]
    second_factors: PgSecondFactorStore  # reset by an administrator
    mail: PgMailOutbox  # the person told of a reset
    links: PgAccountLinkStore  # invitations


@dataclass(frozen=True, kw_only=True, slots=True)
class Internal:
    settings: AuthzSettings
    revoker: PgRedisRevoker  # the current revocations
    admin_store: PgAdminStore  # schools
    client_origins: PgClientOriginStore  # for resource servers' CORS (common/cors.py)


class Visitors(Protocol):
    """What the pages of a signed-in person read (SignInPages, AccountPages)."""

    @property
    def settings(self) -> AuthzSettings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def sessions(self) -> PgSessionStore: ...
    @property
    def users(self) -> PgUserStore: ...
    @property
    def notices(self) -> PgNoticeStore: ...
    @property
    def page_key(self) -> bytes: ...


class ClientRemoval(Protocol):
    """What deleting a client reads (Registration, Administration)."""

    @property
    def admin_store(self) -> PgAdminStore: ...
    @property
    def revoker(self) -> PgRedisRevoker: ...
