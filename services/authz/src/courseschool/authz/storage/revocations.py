"""Revocation: Postgres is the record; Redis carries it to the resource servers.

Each revocation is written to Postgres first, then published: a key with an expiry
(`revoked:grant:<id>`, `revoked:jti:<jti>`) that a resource server can check, and a
message on the `revocations` channel for those that keep a local cache. A Redis
failure never undoes or fails a revocation: resource servers also read the record in
Postgres every second (`common/revocation.py`), and those that cannot fall back to
asking the authorization server.
"""

from __future__ import annotations

import uuid

import asyncpg
import msgspec
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.clock import Clock
from courseschool.common.logging import audit, get_logger
from courseschool.common.redis import deployment_channel
from courseschool.common.revocation import CHANNEL, RevocationEvent, grant_key, jti_key

log = get_logger(__name__)

# A revoked grant also ends the consent its user gave that client (remembered only for
# integrations): revoking must never be undone by a silent `prompt=none`. A grant
# replaced or superseded by a newer sign-in of the same user and client keeps it (the
# approval that ended it wrote it); those are ended by the code exchange's own statement
# (`storage/code_redemption.py`, `REDEEM_CODE`) and only announced here.
_REVOKE_GRANT = """
WITH revoked AS (
    UPDATE authz_grants SET revoked_at = to_timestamp($3), revoke_reason = $2
    WHERE id = $1 AND revoked_at IS NULL
    RETURNING user_id, client_id
)
DELETE FROM authz_consents c USING revoked r
WHERE c.user_id = r.user_id AND c.client_id = r.client_id AND $2 <> 'replaced'
"""
_REVOKE_JTI = """
INSERT INTO authz_revoked_access_tokens (jti, grant_id, expires_at, revoked_at)
VALUES ($1, $2, to_timestamp($3), to_timestamp($4))
ON CONFLICT (jti) DO NOTHING
"""
# What may still be in use at the application's time $1 (the revocation feed's reload).
_RECENT_GRANTS = "SELECT id::text FROM authz_grants WHERE revoked_at > to_timestamp($1) - make_interval(secs => $2)"
_LIVE_JTIS = "SELECT jti FROM authz_revoked_access_tokens WHERE expires_at > to_timestamp($1) - interval '5 minutes'"


_ACTORS = {
    "code_reused": "system",
    "refresh_reused": "system",
    "replaced": "system",
    "stepped_up": "system",
    "superseded": "system",
    "revoked_by_client": "client",
    "revoked_by_user": "user",
    "revoked_by_school": "user",  # a school's owner or admin, on the school's apps page
    "removed_by_user": "user",
    "school_blocked": "user",  # a school's block (app_blocked names who made it)
}


class PgRedisRevoker:
    def __init__(self, pool: asyncpg.Pool, redis: aioredis.Redis, *, access_token_ttl: int, clock: Clock) -> None:
        self._pool = pool
        self._redis = redis
        # A revoked grant must stay visible until every access token it issued expired.
        self._grant_visibility = access_token_ttl + 120
        self._clock = clock

    async def revoke_grant(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        await self._pool.execute(_REVOKE_GRANT, uuid.UUID(grant_id), reason, self._clock.now())
        await self.announce_ended(grant_id, reason=reason, ip=ip)

    async def announce_ended(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        source = {"ip": ip} if ip else {}  # the request's address; none for what no request did
        audit("grant_revoked", actor=_ACTORS.get(reason, "admin"), grant_id=grant_id, reason=reason, **source)
        await self._publish(grant_key(grant_id), self._grant_visibility, RevocationEvent(grant_id=grant_id))

    async def revoke_access_token(self, *, jti: str, grant_id: str, expires_at: int) -> None:
        await self._pool.execute(_REVOKE_JTI, jti, uuid.UUID(grant_id), expires_at, self._clock.now())
        audit("access_token_revoked", actor="client", grant_id=grant_id, jti=jti)
        ttl = max(1, expires_at - self._clock.now() + 120)
        await self._publish(jti_key(jti), ttl, RevocationEvent(jti=jti))

    async def current(self) -> dict[str, list[str]]:
        """What a resource server must refuse now: grants revoked recently enough that
        their access tokens may live, and revoked token ids not yet expired. From
        Postgres, so it survives a Redis flush."""
        now = self._clock.now()
        async with self._pool.acquire() as conn:
            grants = [r["id"] for r in await conn.fetch(_RECENT_GRANTS, now, float(self._grant_visibility))]
            jtis = [r["jti"] for r in await conn.fetch(_LIVE_JTIS, now)]
        return {"grant_ids": grants, "jtis": jtis}

    async def _publish(self, key: str, ttl: int, event: RevocationEvent) -> None:
        """The key and the message in one round trip, each on its own: not a transaction,
        whose EXEC Redis aborts whole when it refuses the SET (out of memory under
        `noeviction`), discarding the PUBLISH, which needs no memory. What Redis does not
        carry the resource servers read from Postgres within the fan-out bound
        (`common/revocation.py`)."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(key, b"1", ex=ttl)
                pipe.publish(deployment_channel(self._redis, CHANNEL), msgspec.json.encode(event))
                stored, published = await pipe.execute(raise_on_error=False)
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("revocation_fanout_failed", key=key, error=type(exc).__name__)
            return
        for part, result in (("key", stored), ("message", published)):
            if isinstance(result, Exception):
                log.warning("revocation_fanout_failed", key=key, part=part, error=type(result).__name__)
