"""Issue 38, item 1: a revocation made while Redis refuses writes reached no resource
server. The authorization server sent the key and the message in one transaction; Redis
out of memory refused the SET and discarded the PUBLISH with it, the feed stayed
"healthy", and the revoked grant's access token read the API for the rest of its life.

Now the message goes whatever happens to the key, and each resource server reads the
record in PostgreSQL every second for what the channel did not carry: a revocation
reaches the API within the stated fan-out bound (`common/revocation.FANOUT_BOUND`) over
a Redis of the test's own at its memory limit, and when nothing was published at all."""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import msgspec
import pytest
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.revocations import PgRedisRevoker
from courseschool.common.clock import FrozenClock
from courseschool.common.redis import create_redis, deployment_channel
from courseschool.common.revocation import CHANNEL, FANOUT_BOUND, RevocationEvent, grant_key
from courseschool.common.settings import load_settings

from ..integration.api_env import ApiEnv, api_env
from ..integration.flow import BASE_URL, Lifecycle
from ..integration.shelf import Shelf
from .servers import OwnRedis, server_folder

SCOPE = "openid courses:read"
SLACK = 0.5  # the API call's own time, on a loaded machine: the bound is the feed's


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    folder = server_folder()
    server = OwnRedis(folder)
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
async def admin_redis(own_redis: OwnRedis) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(own_redis.url)
    yield client
    await client.aclose()


@pytest.fixture
async def env(
    database_url: str, kek: str, own_redis: OwnRedis, clean_db: asyncpg.Pool, admin_redis: aioredis.Redis
) -> AsyncIterator[ApiEnv]:
    settings = load_settings(
        AuthzSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=own_redis.url,
        key_encryption_key=kek,
        internal_token="internal-test-token",
    )
    async with api_env(
        shelf=Shelf(),
        authz_settings=settings,
        database_url=database_url,
        redis_url=own_redis.url,
        pool=clean_db,
        redis=admin_redis,
        clock=FrozenClock(int(time.time())),
        mode="jwt",
    ) as running:
        yield running


async def _fill_to_the_limit(admin: aioredis.Redis) -> None:
    """`maxmemory` a little above what the server uses, nothing to evict, then filled
    until a write is refused; then the limit is pinned a little under what is used, so
    that memory freed meanwhile (clients' buffers) cannot let a small write through."""
    used = int((await admin.info("memory"))["used_memory"])
    await admin.config_set("maxmemory-policy", "noeviction")
    await admin.config_set("maxmemory", str(used + 4 * 1024 * 1024))
    for size in (65536, 16):  # a large value's query buffer counts too: end with small ones
        for n in range(100_000):
            try:
                await admin.set(f"filler:{size}:{n}", b"x" * size)
            except redis.exceptions.OutOfMemoryError:
                break
        else:
            raise AssertionError("Redis never refused a write")
    used = int((await admin.info("memory"))["used_memory"])
    await admin.config_set("maxmemory", str(used - 256 * 1024))
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        await admin.set("probe", b"1")


async def _status(env: ApiEnv, token: str) -> int:
    return (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code


async def _seconds_until_refused(env: ApiEnv, token: str, within: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < within:
        if await _status(env, token) == 401:
            return time.monotonic() - began
        await asyncio.sleep(0.05)
    raise AssertionError(f"the revoked token still read the API {within} s after its revocation")


async def _tokens(env: ApiEnv) -> tuple[dict[str, Any], dict[str, Any]]:
    school = await env.school("acme")
    user = await env.flow.user("owner", school=school)
    reg = await env.flow.register()
    env.flow.client.cookies.clear()
    return reg, await env.flow.tokens(reg, user, scope=SCOPE)


async def test_a_grant_revoked_while_redis_refuses_writes_is_refused_within_the_bound(
    env: ApiEnv, admin_redis: aioredis.Redis
) -> None:
    reg, tokens = await _tokens(env)
    access = tokens["access_token"]
    assert await _status(env, access) == 200  # now cached by the resource API as verified

    await _fill_to_the_limit(admin_redis)
    revoked = await Lifecycle(env.flow).revoke(reg, tokens["refresh_token"])
    assert revoked.status_code == 200, revoked.text
    grant_id = await env.pool.fetchval("SELECT id::text FROM authz_grants WHERE revoked_at IS NOT NULL")
    assert grant_id is not None
    assert await admin_redis.exists(grant_key(grant_id)) == 0  # Redis refused the key: the case of the issue

    await _seconds_until_refused(env, access, within=FANOUT_BOUND + SLACK)
    refreshed = await Lifecycle(env.flow).refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"

    # Redis has room again: nothing makes the token good again.
    await admin_redis.config_set("maxmemory", "0")
    await asyncio.sleep(1.5)
    assert await _status(env, access) == 401


async def test_a_revocation_never_published_reaches_the_api_from_the_record(
    env: ApiEnv, admin_redis: aioredis.Redis
) -> None:
    """An authorization server that died between its commit and its publish: the grant
    is revoked in PostgreSQL alone, and Redis never hears of it."""
    _, tokens = await _tokens(env)
    access = tokens["access_token"]
    assert await _status(env, access) == 200
    grant_id = await env.pool.fetchval("SELECT id FROM authz_grants")
    assert isinstance(grant_id, uuid.UUID)
    now = int(time.time())
    await env.pool.execute(
        "UPDATE authz_grants SET revoked_at = to_timestamp($2), revoke_reason = 'revoked_by_user' WHERE id = $1",
        grant_id,
        now,
    )
    await _seconds_until_refused(env, access, within=FANOUT_BOUND + SLACK)
    assert await admin_redis.exists(grant_key(str(grant_id))) == 0


async def test_the_message_goes_out_when_redis_refuses_the_key(
    own_redis: OwnRedis, admin_redis: aioredis.Redis, clean_db: asyncpg.Pool
) -> None:
    """The key and the message are not one transaction: Redis at its limit refuses the
    SET, and the PUBLISH, which needs no memory, still reaches every subscriber at once."""
    publisher = create_redis(own_redis.url)
    listener = admin_redis.pubsub()
    try:
        await listener.subscribe(deployment_channel(admin_redis, CHANNEL))
        assert (await listener.get_message(timeout=1.0) or {}).get("type") == "subscribe"
        await _fill_to_the_limit(admin_redis)
        revoker = PgRedisRevoker(clean_db, publisher, access_token_ttl=600, clock=FrozenClock(int(time.time())))
        grant_id = str(uuid.uuid4())
        await revoker.announce_ended(grant_id, reason="revoked_by_user")
        message = await listener.get_message(ignore_subscribe_messages=True, timeout=2.0)
        assert message is not None, "the message was discarded with the refused key"
        assert msgspec.json.decode(message["data"], type=RevocationEvent) == RevocationEvent(grant_id=grant_id)
        assert await admin_redis.exists(grant_key(grant_id)) == 0
    finally:
        await listener.aclose()
        await publisher.aclose()
