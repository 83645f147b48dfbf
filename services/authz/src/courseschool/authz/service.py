"""The authorization server's service layer: what the web handlers (and later the
admin CLI) call. It wires protocol rules to the stores and holds no HTTP detail."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import asyncpg
import msgspec
import redis.asyncio as aioredis

from courseschool.common.errors import (
    AccessDeniedError,
    ConsentRequiredError,
    InvalidRequestError,
    InvalidTokenError,
    LoginRequiredError,
    OAuthError,
    TemporarilyUnavailableError,
    TooManyRequestsError,
    UnsupportedGrantTypeError,
)
from courseschool.common.metrics import TOKENS_ISSUED
from courseschool.common.ratelimit import Lockout, RateLimiter
from courseschool.common.jose import KeyEncryptor, decode_kek
from courseschool.common.logging import audit, get_logger
from courseschool.common.resource import canonical_resource
from courseschool.common.scopes import BY_NAME, format_scope
from courseschool.common.secrets import digest, new_token, same

from .passwords import hash_password, needs_rehash, verify_password
from .protocol import registration
from .protocol.authorize import AuthorizationError, Params, UnsafeRequestError, validate_authorization_request
from .protocol.client_id_metadata import is_metadata_url
from .protocol.clock import Clock, SystemClock
from .protocol.consent import consent_can_be_remembered, grantable, session_usable
from .protocol.context import TokenContext
from .protocol import introspection, revocation
from .protocol.grants import authorization_code, refresh_token
from .protocol.key_rotation import RotationPolicy
from .protocol.models import Client, TokenResponse, User
from .protocol.redirect_uris import describe_redirect_host
from .protocol.token_request import TokenForm, authenticate_client, check_grant_type_allowed, parse_token_form
from .protocol.tokens import TokenPolicy
from .settings import AuthzSettings
from .storage.cimd import ClientDirectory, MetadataDocumentFetcher
from .storage.clients import PgClientStore
from .storage.grants import PgCodeStore, PgGrantStore
from .storage.interactions import Interaction, RedisInteractionStore
from .storage.keys import KeyRing, PgKeyStore
from .storage.revocations import PgRedisRevoker
from .storage.admin import PgAdminStore
from .storage.consents import PgConsentStore
from .storage.sessions import PgSessionStore
from .storage.users import PgUserStore

log = get_logger(__name__)

GRANT_HANDLERS = {
    authorization_code.GRANT_TYPE: authorization_code.exchange_code,
    refresh_token.GRANT_TYPE: refresh_token.refresh,
}


class ConsentView(msgspec.Struct, frozen=True, kw_only=True):
    client_name: str
    redirect_host: str
    verified_origin: str | None
    user: User
    granted: list[tuple[str, str]]  # (scope, description)
    dropped: list[tuple[str, str]]


class AuthzService:
    def __init__(
        self, settings: AuthzSettings, pool: asyncpg.Pool, redis: aioredis.Redis, *, clock: Clock | None = None
    ) -> None:
        if not settings.key_encryption_key:
            raise ValueError("KEY_ENCRYPTION_KEY is required")
        self.settings = settings
        self.pool = pool
        self.redis = redis
        self.clock = clock or SystemClock()
        self.clients = PgClientStore(pool)
        self.fetcher = MetadataDocumentFetcher(settings, redis) if settings.cimd_enabled else None
        # Every lookup of a client by id goes through the directory (both kinds of client).
        self.directory = ClientDirectory(self.clients, self.fetcher, self.clock)
        self.users = PgUserStore(pool)
        self.grants = PgGrantStore(pool)
        self.codes = PgCodeStore(pool)
        self.sessions = PgSessionStore(pool)
        self.consents = PgConsentStore(pool)
        self.admin_store = PgAdminStore(pool)
        self.interactions = RedisInteractionStore(redis, settings.interaction_ttl)
        rotation = RotationPolicy(
            interval=settings.key_rotation_interval, lead=settings.key_publish_lead,
            retire_after=max(settings.access_token_ttl, settings.id_token_ttl) + 300,
        )
        self.keys = PgKeyStore(
            pool, KeyEncryptor(decode_kek(settings.key_encryption_key)), issuer=settings.issuer, clock=self.clock,
            policy=rotation,
        )
        self.revoker = PgRedisRevoker(pool, redis, access_token_ttl=settings.access_token_ttl, clock=self.clock)
        self.ring: KeyRing | None = None
        self.default_resource = canonical_resource(settings.base_url) or settings.base_url
        extra = {canonical_resource(r) for r in settings.extra_resources.split()}
        self.known_resources = frozenset({self.default_resource, *(r for r in extra if r)})
        self.limiter = RateLimiter(redis, "authz:rate")
        # Parsed once: the limits are checked on every token request.
        self.rates = {name: settings.rate(name) for name in (
            "rate_register_per_ip", "rate_token_per_ip", "rate_token_per_client", "rate_login_per_ip",
        )}
        self.lockout = Lockout(
            redis, "authz:login", threshold=settings.login_lockout_threshold, window=900,
            base=settings.login_lockout_base, cap=3600,
        )
        self.policy = TokenPolicy(
            issuer=settings.issuer, access_token_ttl=settings.access_token_ttl, id_token_ttl=settings.id_token_ttl
        )

    async def start(self) -> None:
        """Load the signing keys; with Postgres down, start anyway (not ready: 503s)
        and let the maintenance loop load them once it is back."""
        try:
            self.ring = await self.keys.ensure_active()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("signing_keys_unavailable_at_start", error=type(exc).__name__)

    async def maintain_keys(self) -> None:
        """Take due rotation steps, then reload, so this replica signs with the key
        every other replica signs with."""
        await self.keys.maintain()
        self.ring = await self.keys.load()

    async def maintenance_loop(self) -> None:
        """Every replica: reload keys each KEY_RELOAD_INTERVAL; about hourly, remove
        unused dynamically registered clients."""
        rounds = 0
        while True:
            # Until the keys are loaded (Postgres was down at start), try every second.
            await asyncio.sleep(self.settings.key_reload_interval if self.ring is not None else 1)
            rounds += 1
            try:
                if self.ring is None:
                    self.ring = await self.keys.ensure_active()
                await self.maintain_keys()
                if rounds * self.settings.key_reload_interval >= 3600:
                    rounds = 0
                    await self.remove_unused_clients()
            except Exception as exc:  # keep the last good keys; try again next round
                log.warning("maintenance_failed", error=type(exc).__name__)

    @property
    def key_ring(self) -> KeyRing:
        if self.ring is None:
            raise TemporarilyUnavailableError("the signing keys are not loaded yet; try again shortly")
        return self.ring

    # -- registration (RFC 7591) ------------------------------------------------

    async def limit(self, rate_name: str, key: str, *more: tuple[str, str]) -> None:
        """Count one request against configured rates (in order, one Redis call); 429 at
        the first that is exceeded."""
        decision = await self.limiter.hit(
            f"{rate_name}:{key}", self.rates[rate_name], *((f"{n}:{k}", self.rates[n]) for n, k in more)
        )
        if not decision.allowed:
            raise TooManyRequestsError("too many requests; slow down", retry_after=decision.retry_after)

    async def register_client(self, body: bytes, *, ip: str) -> dict[str, Any]:
        await self.limit("rate_register_per_ip", ip)
        meta = registration.parse_metadata(body)
        secret = new_token() if meta.token_endpoint_auth_method == "client_secret_post" else None
        now = self.clock.now()
        client = await self.clients.create(
            client_id=new_token(18), client_name=meta.client_name, redirect_uris=meta.redirect_uris or [],
            token_endpoint_auth_method=meta.token_endpoint_auth_method, grant_types=meta.grant_types,
            response_types=meta.response_types, application_type=meta.application_type, scope=meta.scope,
            id_token_signed_response_alg=meta.id_token_signed_response_alg,
            secret_hash=digest(secret) if secret else None, is_integration=False, now=now,
        )
        audit("client_registered", actor="client", client_id=client.client_id, auth_method=client.token_endpoint_auth_method)
        return registration.registration_response(
            meta, client_id=client.client_id, issued_at=client.client_id_issued_at, secret=secret
        )

    # -- authorization (RFC 6749 §4.1.1) ----------------------------------------

    async def start_authorization(self, params: Params, session_id: str | None) -> tuple[Interaction, str] | str:
        """Validate the request, then either open an interaction (returning it and its
        browser-binding value) or, when an integration's remembered consent covers
        the request, finish at once (returning the redirect URL). Raises
        UnsafeRequestError or AuthorizationError."""
        client_ids = params.get("client_id") or []
        if self.fetcher is not None and len(client_ids) == 1 and is_metadata_url(client_ids[0]):
            _, refusal = await self.directory.resolve(client_ids[0])
            if refusal is not None:
                raise UnsafeRequestError(f"the client's metadata document cannot be used: {refusal}")
        client, request = await validate_authorization_request(
            params, self.directory, known_resources=self.known_resources, default_resource=self.default_resource
        )
        now = self.clock.now()
        session = await self.sessions.get(session_id, now=now)
        usable = session is not None and session_usable(request, auth_time=session.auth_time, now=now)
        if usable and session is not None and "consent" not in request.prompt:
            location = await self._remembered(client, request, session.user_id, session.auth_time)
            if location is not None:
                return location
        if "none" in request.prompt:
            # OIDC Core §3.1.2.6: no page may be shown.
            err: OAuthError = (
                ConsentRequiredError("the user must approve this client")
                if usable
                else LoginRequiredError("the user is not signed in")
            )
            raise AuthorizationError(err, request.redirect_uri, request.state)
        return await self.interactions.create(
            request,
            user_id=session.user_id if usable and session else None,
            auth_time=session.auth_time if usable and session else None,
        )

    async def _remembered(self, client: Client, request: Any, user_id: str, auth_time: int) -> str | None:
        """Only administrator-made integrations may skip the consent page."""
        if not consent_can_be_remembered(client):
            return None
        user = await self.users.get(user_id)
        remembered = await self.consents.scope(user_id, client.client_id)
        if user is None or user.disabled or remembered is None:
            return None
        granted, _ = grantable(request.scope, role=user.role, client=client)
        if not granted or not set(granted) <= set(remembered.split()):
            return None
        audit("consent_remembered", actor="user", subject=user_id, client_id=client.client_id)
        return await self._issue_code(client, user, request, auth_time, granted)

    async def open_interaction(self, uid: str, binding: str | None) -> Interaction | None:
        interaction = await self.interactions.get(uid)
        if interaction is None or not binding or not same(digest(binding), interaction.browser_hash):
            return None
        return interaction

    async def login(self, interaction: Interaction, email: str, password: str, *, ip: str) -> str | None:
        """Check the credentials; on success bind the user to the interaction and open a
        login session, returning its id for the cookie. On failure record a message for
        the page and return None. Too many attempts (from this address, or at this
        account) raise TooManyRequestsError before the password is even checked."""
        await self.limit("rate_login_per_ip", ip)
        account = digest(email.strip().lower()).hex()
        locked = await self.lockout.locked_for(account)
        if locked:
            audit("login_locked", actor="user", client_id=interaction.request.client_id, retry_after=locked)
            raise TooManyRequestsError("too many failed sign-ins for this account; try again later", retry_after=locked)
        found = await self.users.get_for_login(email) if 0 < len(email) <= 320 else None
        user, password_hash = found if found else (None, None)
        ok = verify_password(password_hash, password[:1024])
        if not ok or user is None or user.disabled:
            audit("login_failed", actor="user", subject=user.id if user else None, client_id=interaction.request.client_id)
            interaction.login_error = "The email or password is not right."
            await self.interactions.save(interaction)
            if await self.lockout.failed(account):
                audit("account_locked", actor="system", subject=user.id if user else None)
            return None
        await self.lockout.succeeded(account)
        if password_hash and needs_rehash(password_hash):
            await self.users.set_password_hash(user.id, hash_password(password))
        now = self.clock.now()
        session_id = await self.sessions.create(user_id=user.id, auth_time=now, ttl=self.settings.session_ttl)
        interaction.user_id, interaction.auth_time, interaction.login_error = user.id, now, None
        await self.interactions.save(interaction)
        audit("login_succeeded", actor="user", subject=user.id, client_id=interaction.request.client_id)
        return session_id

    async def consent_view(self, interaction: Interaction) -> ConsentView | None:
        client = await self.directory.get(interaction.request.client_id)
        user = await self.users.get(interaction.user_id) if interaction.user_id else None
        if client is None or user is None:
            return None
        granted, dropped = grantable(interaction.request.scope, role=user.role, client=client)
        return ConsentView(
            client_name=client.client_name or "An unnamed application",
            redirect_host=describe_redirect_host(interaction.request.redirect_uri),
            verified_origin=client.verified_origin,
            user=user,
            granted=[(s, BY_NAME[s].description) for s in granted],
            dropped=[(s, BY_NAME[s].description) for s in dropped],
        )

    async def decide(self, uid: str, *, approve: bool) -> str:
        """Finish the interaction (once); return the URL to send the browser to."""
        interaction = await self.interactions.take(uid)
        if interaction is None:
            raise InvalidRequestError("this sign-in request has already been completed or has expired")
        request = interaction.request
        client = await self.directory.get(request.client_id)
        user = await self.users.get(interaction.user_id) if interaction.user_id else None
        if client is None or client.disabled or user is None or user.disabled or interaction.auth_time is None:
            raise InvalidRequestError("this sign-in request is no longer valid")
        if not approve:
            audit("consent_denied", actor="user", subject=user.id, client_id=client.client_id)
            return error_redirect_url(
                AccessDeniedError("the user denied the request"), request.redirect_uri, request.state,
                self.settings.issuer,
            )
        granted, _ = grantable(request.scope, role=user.role, client=client)
        if not granted:
            return error_redirect_url(
                AccessDeniedError("the user's role allows none of the requested scopes"), request.redirect_uri,
                request.state, self.settings.issuer,
            )
        if consent_can_be_remembered(client):
            await self.consents.remember(user.id, client.client_id, format_scope(granted))
        return await self._issue_code(client, user, request, interaction.auth_time, granted)

    async def _issue_code(self, client: Client, user: User, request: Any, auth_time: int, granted: list[str]) -> str:
        code = new_token()
        now = self.clock.now()
        grant = await self.grants.create_with_code(
            client_id=client.client_id, user_id=user.id, school_id=user.school_id, scope=format_scope(granted),
            resource=request.resource, auth_time=auth_time, code=code,
            redirect_uri=request.redirect_uri, code_challenge=request.code_challenge, nonce=request.nonce,
            code_expires_at=now + self.settings.code_ttl, now=now,
        )
        audit("consent_given", actor="user", subject=user.id, client_id=client.client_id, grant_id=grant.id)
        return redirect_url(request.redirect_uri, {"code": code, "state": request.state, "iss": self.settings.issuer})

    async def remove_unused_clients(self) -> list[str]:
        """Registration hygiene: dynamically registered clients that never completed a
        grant, older than UNUSED_CLIENT_TTL."""
        cutoff = self.clock.now() - self.settings.unused_client_ttl
        removed = await self.admin_store.delete_unused_clients(older_than=cutoff)
        if removed:
            audit("unused_clients_removed", actor="system", count=len(removed))
        return removed

    # -- token endpoint (RFC 6749 §3.2) -----------------------------------------

    def token_context(self) -> TokenContext:
        return TokenContext(
            clients=self.directory, users=self.users, codes=self.codes, grants=self.grants, revoker=self.revoker,
            signer=self.key_ring, verifier=self.key_ring, policy=self.policy, clock=self.clock,
            known_resources=self.known_resources, refresh_idle_ttl=self.settings.refresh_token_idle_ttl,
            refresh_absolute_ttl=self.settings.refresh_token_absolute_ttl,
            refresh_grace=self.settings.refresh_token_grace,
        )

    async def token(self, form: Params, *, ip: str) -> TokenResponse:
        parsed, client = await self._authenticated(form, ip=ip)
        if not parsed.grant_type:
            raise InvalidRequestError("grant_type is required")
        handler = GRANT_HANDLERS.get(parsed.grant_type)
        if handler is None:
            raise UnsupportedGrantTypeError(f"grant_type {parsed.grant_type!r} is not supported")
        check_grant_type_allowed(client, parsed.grant_type)
        response = await handler(parsed, client, self.token_context())
        TOKENS_ISSUED.labels(parsed.grant_type).inc()
        return response

    async def revoke(self, form: Params, *, ip: str) -> None:
        """RFC 7009 §2."""
        parsed, client = await self._authenticated(form, ip=ip)
        await revocation.revoke(parsed, client, self.token_context())

    async def introspect(self, form: Params, *, ip: str) -> dict[str, Any]:
        """RFC 7662 §2."""
        parsed, client = await self._authenticated(form, ip=ip)
        return await introspection.introspect(parsed, client, self.token_context())

    async def _authenticated(self, form: Params, *, ip: str) -> tuple[TokenForm, Client]:
        """Rate limits (per address, then per named client, in one Redis call, before any
        secret is checked), then client authentication."""
        try:
            parsed = parse_token_form(form)
        except OAuthError:
            await self.limit("rate_token_per_ip", ip)  # a malformed request counts against its address too
            raise
        per_client = [("rate_token_per_client", digest(parsed.client_id[:512]).hex())] if parsed.client_id else []
        await self.limit("rate_token_per_ip", ip, *per_client)
        return parsed, await authenticate_client(parsed, self.directory)

    # -- bearer tokens at the authorization server (UserInfo) --------------------

    async def verify_bearer(self, token: str) -> dict[str, Any]:
        """An access token of ours, live: signature, issuer, expiry, grant not revoked."""
        claims = self.key_ring.verify(token)
        grant = await self.grants.get(str(claims.get("grant_id", "")))
        if grant is None or grant.revoked or await self.revoker.access_token_revoked(str(claims["jti"])):
            raise InvalidTokenError("the access token has been revoked")
        return claims

    async def userinfo(self, claims: dict[str, Any]) -> dict[str, Any]:
        """OIDC Core §5.3: `sub` plus the claims the granted scopes allow (§5.4)."""
        user = await self.users.get(claims["sub"])
        if user is None or user.disabled:
            raise InvalidTokenError("the user of this access token is no longer active")
        scopes = set(str(claims.get("scope", "")).split())
        out: dict[str, Any] = {"sub": user.id}
        if "profile" in scopes:
            out["name"] = user.name
            out["preferred_username"] = user.preferred_username
        if "email" in scopes:
            out["email"] = user.email
            out["email_verified"] = user.email_verified
        return out


def redirect_url(base: str, params: dict[str, str | None]) -> str:
    """Add query parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2)."""
    parts = urlsplit(base)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def error_redirect_url(error: OAuthError, redirect_uri: str, state: str | None, issuer: str) -> str:
    """RFC 6749 §4.1.2.1 with RFC 9207 `iss`."""
    return redirect_url(
        redirect_uri,
        {"error": error.error, "error_description": error.description or None, "state": state, "iss": issuer},
    )
