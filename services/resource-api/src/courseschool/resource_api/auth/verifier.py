"""Bearer-token checking at the resource server.

Two modes, chosen by TOKEN_VALIDATION:
- `jwt`: RFC 9068 §4 checks made locally against the authorization server's JWKS
  (cached; an unknown `kid` refetches it, at most once per JWKS_REFETCH_INTERVAL).
- `introspection`: RFC 7662 with this server's own confidential client, the answer
  cached in Redis under a digest of the token, never longer than the token lives.

Either way the revocation state comes from the feed the authorization server
publishes (`revocation_feed.py`), caught up every second from its record in Postgres so
that a revocation Redis did not carry still arrives within the fan-out bound; verified
tokens are kept in an in-process cache so the hot path makes no signature check and no
network call. When the feed is lost, the
cache is dropped and every token is introspected, uncached, until the feed is back.

A DPoP-bound token (`cnf.jkt`, from the JWT or from introspection) is checked against
the request's proof on every request, cached or not (RFC 9449 §7: the proof is per
request); a bearer token costs nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from typing import Any

import httpx
import msgspec
import redis.asyncio as aioredis
import redis.exceptions
from joserfc.jwk import KeySet

from courseschool.common.bearer import Credentials
from courseschool.common.clock import Clock, SystemClock
from courseschool.common.dpop import DpopChecker, ProofTarget, check_sender, confirmation_jkt
from courseschool.common.errors import InvalidTokenError, TemporarilyUnavailableError
from courseschool.common.jose import key_set, unverified_header, verify_access_token
from courseschool.common.logging import get_logger
from courseschool.common.metrics import CACHE

from .revocation_feed import CatchUp, RevocationFeed, RevocationRecord

log = get_logger(__name__)


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """Who calls: anonymous, or a token acting for one user at one school."""

    anonymous: bool
    sub: str | None = None
    client_id: str | None = None
    school_id: str | None = None
    scopes: frozenset[str] = frozenset()
    jti: str | None = None
    grant_id: str | None = None
    exp: int = 0
    jkt: str | None = None  # the DPoP key the token is bound to (RFC 9449 §6)


ANONYMOUS = Principal(anonymous=True)


def principal_from_claims(claims: dict[str, Any]) -> Principal:
    school_id = claims.get("school_id")
    if not isinstance(school_id, str):
        raise InvalidTokenError("the access token names no school")
    return Principal(
        anonymous=False,
        sub=str(claims["sub"]),
        client_id=str(claims.get("client_id")),
        school_id=school_id,
        scopes=frozenset(str(claims.get("scope", "")).split()),
        jti=str(claims.get("jti")),
        grant_id=str(claims["grant_id"]) if claims.get("grant_id") else None,
        exp=int(claims["exp"]),
        jkt=confirmation_jkt(claims),
    )


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class JwksCache:
    def __init__(self, http: httpx.AsyncClient, *, refetch_interval: int, max_age: int) -> None:
        self._http = http
        self._refetch_interval = refetch_interval
        self._max_age = max_age
        self._keys: KeySet | None = None
        self._kids: set[str] = set()
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    def _due(self, kid: str | None) -> bool:
        age = time.monotonic() - self._fetched
        if self._keys is None:
            return self._fetched == 0 or age > 1.0
        if age > self._max_age:
            return True
        return kid not in self._kids and age > self._refetch_interval

    async def keys_for(self, kid: str | None) -> KeySet:
        if self._due(kid):
            async with self._lock:
                if self._due(kid):  # a request that waited here may find it done
                    await self._fetch()
        if self._keys is None:
            raise TemporarilyUnavailableError("the signing keys are not available; try again shortly")
        return self._keys

    async def _fetch(self) -> None:
        try:
            response = await self._http.get("/api/oauth/jwks", timeout=3.0)
            response.raise_for_status()
            keys = response.json()["keys"]
            self._keys = key_set(keys)
            self._kids = {k["kid"] for k in keys}
            self._fetched = time.monotonic()
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            log.warning("jwks_fetch_failed", error=type(exc).__name__)
            self._fetched = time.monotonic()  # keep the last good keys; do not hammer


class Introspector:
    """RFC 7662 §2 with this server's confidential client."""

    def __init__(self, http: httpx.AsyncClient, client_id: str | None, client_secret: str | None) -> None:
        self._http = http
        self._client_id = client_id
        self._client_secret = client_secret

    async def introspect(self, token: str) -> dict[str, Any]:
        if not self._client_id or not self._client_secret:
            raise TemporarilyUnavailableError("token introspection is not configured")
        try:
            response = await self._http.post(
                "/api/oauth/introspect",
                timeout=3.0,
                data={"token": token, "client_id": self._client_id, "client_secret": self._client_secret},
            )
        except httpx.HTTPError:
            raise TemporarilyUnavailableError("the authorization server is unreachable") from None
        if response.status_code != 200:
            log.error("introspection_refused", status=response.status_code)
            raise TemporarilyUnavailableError("token introspection failed")
        return response.json()


class BearerVerifier:
    """Turns a bearer token into a Principal, or raises InvalidTokenError."""

    def __init__(
        self,
        *,
        mode: str,
        issuer: str,
        audience: str,
        leeway: int,
        jwks: JwksCache,
        introspector: Introspector,
        redis: aioredis.Redis,
        cache_ttl: int,
        dpop: DpopChecker,
        clock: Clock | None = None,
        revocations: Any = None,
        record: RevocationRecord | None = None,
    ) -> None:
        self.mode = mode
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway
        self._jwks = jwks
        self._introspector = introspector
        self._redis = redis
        self._cache_ttl = cache_ttl
        self._dpop = dpop
        self._clock = clock or SystemClock()
        self._verified: dict[str, Principal] = {}  # token digest -> principal
        catch_up = CatchUp(record, self._clock) if record is not None else None
        self.feed = RevocationFeed(redis, on_change=self._verified.clear, loader=revocations, catch_up=catch_up)

    async def verify(self, credentials: Credentials, target: ProofTarget) -> Principal:
        """The token's principal, once the request proved the token's DPoP key if it has one."""
        principal = await self._principal(credentials.token)
        await check_sender(
            self._dpop, scheme=credentials.scheme, token=credentials.token, jkt=principal.jkt, target=target
        )
        return principal

    async def _principal(self, token: str) -> Principal:
        now = self._clock.now()
        digest = token_digest(token)
        if not self.feed.healthy:
            # The revocation state is unknown: the authorization server decides.
            return self._live(await self._introspect(token, digest, use_cache=False), now)
        cached = self._verified.get(digest)
        CACHE.labels("verified_tokens", "hit" if cached is not None else "miss").inc()
        if cached is not None:
            return self._live(cached, now)
        principal = await (self._verify_jwt(token, now) if self.mode == "jwt" else self._introspect(token, digest))
        principal = self._live(principal, now)
        if len(self._verified) > 100_000:
            self._verified.clear()
        self._verified[digest] = principal
        return principal

    def _live(self, principal: Principal, now: int) -> Principal:
        if principal.exp + self._leeway <= now:
            raise InvalidTokenError("the access token has expired")
        if self.feed.revoked(principal):
            raise InvalidTokenError("the access token has been revoked")
        return principal

    async def _verify_jwt(self, token: str, now: int) -> Principal:
        kid = unverified_header(token).get("kid")
        keys = await self._jwks.keys_for(kid if isinstance(kid, str) else None)
        claims = verify_access_token(
            token, keys, issuer=self._issuer, audience=self._audience, now=now, leeway=self._leeway
        )
        return principal_from_claims(claims)

    async def _introspect(self, token: str, digest: str, *, use_cache: bool = True) -> Principal:
        key = f"rs:introspection:{digest}"
        if use_cache:
            try:
                cached = await self._redis.get(key)
            except (redis.exceptions.RedisError, OSError):
                cached = None
            CACHE.labels("introspection", "hit" if cached else "miss").inc()
            if cached:
                return msgspec.json.decode(cached, type=Principal)
        answer = await self._introspector.introspect(token)
        if not answer.get("active"):
            raise InvalidTokenError("the access token is not active")
        if answer.get("iss") != self._issuer:
            raise InvalidTokenError("the access token was issued by another issuer")
        aud = answer.get("aud")
        if self._audience not in (aud if isinstance(aud, list) else [aud]):
            raise InvalidTokenError("the access token is not meant for this resource")
        principal = principal_from_claims(answer)
        ttl = min(self._cache_ttl, principal.exp - self._clock.now())
        if use_cache and ttl > 0:
            with contextlib.suppress(redis.exceptions.RedisError, OSError):
                await self._redis.set(key, msgspec.json.encode(principal), ex=ttl)
        return principal
