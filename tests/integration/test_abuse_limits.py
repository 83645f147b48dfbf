"""Abuse limits: 429 with Retry-After, per address and per client, progressive
lockout of an address at an account after failed sign-ins (the rest of the sign-in
policy: test_sign_in_lockout.py), and the limits keep holding (in memory) when Redis is gone."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.ratelimit import LEASE_SHARE, Lockout, RateLimiter, parse_rate

from .conftest import serve
from .flow import Flow, Lifecycle, pkce_pair


def _tight(base: AuthzSettings, **changes: object) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(base), **changes})


@pytest.fixture
async def tight_flow(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    settings = _tight(
        authz_settings,
        rate_register_per_ip="3/3600",
        rate_token_per_client="4/60",
        rate_token_per_ip="50/60",
        rate_login_per_ip="50/300",
        login_lockout_threshold=3,
        login_lockout_base=30,
    )
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_registration_is_limited_per_address(tight_flow: Flow) -> None:
    for _ in range(3):
        await tight_flow.register()
    refused = await tight_flow.client.post("/api/oauth/register", json={"redirect_uris": ["http://127.0.0.1/cb"]})
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert 0 < int(refused.headers["retry-after"]) <= 3600
    assert await tight_flow.count("authz_clients") == 3


async def test_token_requests_are_limited_per_client(tight_flow: Flow) -> None:
    reg = await tight_flow.register()
    statuses = [
        (
            await tight_flow.token(grant_type="refresh_token", refresh_token="guess", client_id=reg["client_id"])
        ).status_code
        for _ in range(6)
    ]
    assert statuses == [400, 400, 400, 400, 429, 429]
    other = await tight_flow.register()
    assert (
        await tight_flow.token(grant_type="refresh_token", refresh_token="x", client_id=other["client_id"])
    ).status_code == 400


async def test_a_resource_server_introspects_past_the_token_endpoints_limits(tight_flow: Flow) -> None:
    """Introspection has limits of its own: a resource server asks about many users'
    tokens from one address (every token while the revocation feed is down), far more
    than one client's token requests (RATE_TOKEN_PER_CLIENT is 4/60 here)."""
    rs = await tight_flow.integration()
    tokens = await tight_flow.tokens()
    life = Lifecycle(tight_flow)
    answers = [await life.introspect(rs, tokens["access_token"]) for _ in range(8)]
    assert all(a["active"] is True for a in answers)


async def test_introspection_is_limited_by_its_own_rates(authz_settings, clean_db, redis_client, clock) -> None:
    settings = _tight(authz_settings, rate_introspect_per_client="3/60")
    async with serve(create_app(settings, clock=clock)) as client:
        flow = Flow(client, clean_db, redis_client)
        rs = await flow.integration()
        form = {"token": "whatever", "client_id": rs["client_id"], "client_secret": rs["client_secret"]}
        answers = [await client.post("/api/oauth/introspect", data=form) for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert answers[3].json()["error"] == "too_many_requests" and int(answers[3].headers["retry-after"]) > 0
        reg = await flow.register()
        token = await flow.token(grant_type="refresh_token", refresh_token="guess", client_id=reg["client_id"])
        assert token.status_code == 400  # the token endpoint's limits are apart


async def test_failed_sign_ins_lock_the_address_out_of_the_account_progressively(
    tight_flow: Flow, redis_client
) -> None:
    reg = await tight_flow.register()
    user = await tight_flow.user()
    _, challenge = pkce_pair()
    interaction = (await tight_flow.start(tight_flow.authorize_params(reg, challenge))).headers["location"]
    for _ in range(3):
        assert (await tight_flow.login(interaction, user, password="wrong")).status_code == 303
    locked = await tight_flow.login(interaction, user)  # even the right password waits out the lock
    assert locked.status_code == 429
    assert 0 < int(locked.headers["retry-after"]) <= 30
    assert await tight_flow.count("authz_login_sessions") == 0
    ttl = await redis_client.ttl(next(iter([k async for k in redis_client.scan_iter(match="authz:login:lock:*")])))
    assert 0 < ttl <= 30


async def test_lockout_doubles_with_each_further_failure(redis_client) -> None:
    lockout = Lockout(redis_client, "t", threshold=2, window=900, base=10, cap=35)
    assert [await lockout.failed("acct") for _ in range(5)] == [0, 10, 20, 35, 35]
    assert 0 < await lockout.locked_for("acct") <= 35
    await lockout.succeeded("acct")
    assert await lockout.failed("acct") == 0


async def test_limits_hold_in_memory_when_redis_is_gone() -> None:
    import redis.asyncio as aioredis

    dead = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    limiter = RateLimiter(dead, "t")
    rate = parse_rate("2/60", "test")
    decisions = [await limiter.hit("k", rate) for _ in range(3)]
    assert [d.allowed for d in decisions] == [True, True, False]
    assert decisions[2].retry_after > 0
    lockout = Lockout(dead, "t", threshold=1, window=900, base=5, cap=60)
    assert await lockout.failed("acct") == 5 and await lockout.locked_for("acct") > 0
    await dead.aclose()


@pytest.mark.parametrize("value", ["10", "0/60", "5/0", "x/y", "-1/60"])
def test_malformed_rate_settings_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="LIMIT/SECONDS"):
        parse_rate(value, "rate_token_per_ip")


async def test_oversized_bodies_are_413_not_500(flow: Flow) -> None:
    response = await flow.client.post(
        "/api/oauth/register", content=b"{" + b" " * (70 * 1024) + b"}", headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    long_param = await flow.client.get("/oauth/authorize?client_id=" + "a" * 600)
    assert long_param.status_code == 400


async def test_a_limit_recovers_when_its_window_passes(redis_client) -> None:
    import asyncio

    limiter = RateLimiter(redis_client, "recovery")
    rate = parse_rate("2/1", "test")
    for _ in range(10):  # use up the current one-second window (two hits, four across its end)
        if not (await limiter.hit("probe", rate)).allowed:
            break
    else:
        pytest.fail("a limit of two a second never refused in ten hits")
    refused = await limiter.hit("probe", rate)
    assert not refused.allowed and refused.retry_after == 1
    await asyncio.sleep(1.05)
    assert (await limiter.hit("probe", rate)).allowed


async def test_window_counters_expire_with_their_window(redis_client) -> None:
    """Each window's counter carries a TTL from its first hit, and later hits keep it:
    nothing a limiter writes stays in Redis for good."""
    limiter = RateLimiter(redis_client, "expiry")
    rate = parse_rate("40/60", "test")  # below LEASE_SHARE: one event per round trip
    await limiter.hit("caller", rate)
    (key,) = [k async for k in redis_client.scan_iter(match="expiry:caller:*")]
    first = await redis_client.ttl(key)
    assert 0 < first <= 61
    for _ in range(3):
        await limiter.hit("caller", rate)
    assert int(await redis_client.get(key)) == 4
    assert 0 < await redis_client.ttl(key) <= first


async def test_a_busy_key_takes_its_events_in_leases(redis_client) -> None:
    """A process takes 1/LEASE_SHARE of a window's limit per round trip: a hundred
    events under a limit of 1000 are five leases of twenty in Redis."""
    limiter = RateLimiter(redis_client, "lease")
    rate = parse_rate("1000/60", "test")
    assert 1000 // LEASE_SHARE == 20
    assert all([(await limiter.hit("busy", rate)).allowed for _ in range(100)])
    (key,) = [k async for k in redis_client.scan_iter(match="lease:busy:*")]
    assert int(await redis_client.get(key)) == 100
    await limiter.hit("busy", rate)  # the 101st takes the sixth lease
    assert int(await redis_client.get(key)) == 120


async def test_concurrent_requests_share_one_lease_taking(redis_client) -> None:
    """Two hundred requests at once on one key: they wait for the lease being taken
    instead of each taking one, so ten leases of twenty are taken and all are spent
    (each taking its own once reserved thirty-two leases under load and spent one)."""
    import asyncio

    prefix = f"burst-{uuid.uuid4().hex[:8]}"
    limiter = RateLimiter(redis_client, prefix)
    rate = parse_rate("1000/60", "test")
    decisions = await asyncio.gather(*(limiter.hit("busy", rate, ("client", rate)) for _ in range(200)))
    assert all(d.allowed for d in decisions)
    counters = [int(await redis_client.get(k)) async for k in redis_client.scan_iter(match=f"{prefix}:*")]
    assert counters == [200, 200]


async def test_leases_of_several_processes_never_pass_the_limit_together(redis_client) -> None:
    """Two processes (two limiters on one Redis) on one key: together they admit exactly
    the limit, the last lease cut to what was left, and refuse from then on."""
    prefix = f"shared-{uuid.uuid4().hex[:8]}"
    one, two = RateLimiter(redis_client, prefix), RateLimiter(redis_client, prefix)
    rate = parse_rate("101/60", "test")  # leases of two: the last one has a single event left
    admitted = 0
    for _ in range(80):
        for limiter in (one, two):
            admitted += (await limiter.hit("key", rate)).allowed
    assert admitted == 101
    refused = await one.hit("key", rate)
    assert not refused.allowed and 0 < refused.retry_after <= 60


async def test_a_refused_key_spends_no_lease_of_the_keys_after_it(redis_client) -> None:
    """Order holds with leases: the per-address limit refuses, so the per-client lease
    already held is not spent (the client's requests from elsewhere keep it)."""
    prefix = f"order-{uuid.uuid4().hex[:8]}"
    limiter = RateLimiter(redis_client, prefix)
    address, client = parse_rate("1/60", "address"), parse_rate("100/60", "client")
    assert (await limiter.hit("ip-1", address, ("app", client))).allowed  # the client's lease: 2, one spent
    assert not (await limiter.hit("ip-1", address, ("app", client))).allowed
    assert (await limiter.hit("ip-2", address, ("app", client))).allowed  # the lease's second event
    (key,) = [k async for k in redis_client.scan_iter(match=f"{prefix}:app:*")]
    assert int(await redis_client.get(key)) == 2


@pytest.mark.parametrize("reachable", [True, False], ids=["redis", "memory-fallback"])
async def test_several_limits_count_in_order_and_stop_at_the_first_exceeded(redis_client, reachable) -> None:
    import redis.asyncio as aioredis

    client = redis_client if reachable else aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    limiter = RateLimiter(client, f"multi-{uuid.uuid4().hex[:8]}")
    wide, narrow = parse_rate("3/60", "wide"), parse_rate("1/60", "narrow")
    assert (await limiter.hit("ip", wide, ("client-a", narrow))).allowed
    second = await limiter.hit("ip", wide, ("client-a", narrow))  # client-a is over; ip counted 2
    assert not second.allowed and 0 < second.retry_after <= 60
    assert (await limiter.hit("ip", wide, ("client-b", narrow))).allowed  # ip: 3, within
    refused = await limiter.hit("ip", wide, ("client-c", narrow))  # ip over: client-c not counted
    assert not refused.allowed
    assert (await limiter.hit("elsewhere", wide, ("client-c", narrow))).allowed  # client-c's first count
    if not reachable:
        await client.aclose()


async def test_malformed_token_requests_count_against_the_address(
    authz_settings, clean_db, redis_client, clock
) -> None:
    settings = _tight(authz_settings, rate_token_per_ip="3/60")
    async with serve(create_app(settings, clock=clock)) as client:
        repeated = "grant_type=refresh_token&grant_type=refresh_token&client_id=x"
        form = {"content-type": "application/x-www-form-urlencoded"}
        answers = [await client.post("/api/oauth/token", content=repeated, headers=form) for _ in range(4)]
    assert [a.status_code for a in answers] == [400, 400, 400, 429]
    assert answers[0].json()["error"] == "invalid_request"
