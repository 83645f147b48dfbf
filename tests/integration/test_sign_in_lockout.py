"""Security review, finding 5: the sign-in lockout must hurt the one guessing, not the
account's owner. Failures count per (account, address) and per address, which lock;
per account they only slow (one attempt per address per cooldown), and the owner's
right password from a clean address goes through. The same holds, per replica, while
Redis is down."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
import structlog

from courseschool.authz.app import create_app
from courseschool.authz.limits import SignInLimits

from .conftest import serve
from .flow import Flow
from .sign_in import from_address, signed_in, try_sign_in, with_settings

ATTACKER, OTHER_ATTACKER, THIRD_ATTACKER = "203.0.113.66", "203.0.113.67", "203.0.113.68"
OWNER, OWNER_ELSEWHERE = "198.51.100.7", "198.51.100.8"
TIGHT = {
    "login_lockout_threshold": 3,
    "login_lockout_base": 30,
    "login_source_threshold": 4,
    "login_account_ceiling": 4,
    "login_slow_cooldown": 60,
}


@pytest.fixture
async def three_strikes(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    """Only the threshold changed (a setting the code before the fix had too)."""
    async with serve(create_app(with_settings(authz_settings, login_lockout_threshold=3), clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


@pytest.fixture
async def tight(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    async with serve(create_app(with_settings(authz_settings, **TIGHT), clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_the_owner_signs_in_from_a_clean_address_after_an_attack(three_strikes: Flow) -> None:
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user()
    async with from_address(flow.client, flow, ATTACKER) as attacker:
        tries = [await try_sign_in(attacker, reg, victim["email"], f"guess {n}") for n in range(5)]
    async with from_address(flow.client, flow, OWNER) as owner:
        answer = await try_sign_in(owner, reg, victim["email"], victim["password"])
    assert [t.status_code for t in tries] == [303, 303, 303, 429, 429]
    assert signed_in(answer), answer.text


async def test_the_attackers_address_is_locked_out_of_the_account(three_strikes: Flow) -> None:
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user()
    async with from_address(flow.client, flow, ATTACKER) as attacker:
        for n in range(3):
            await try_sign_in(attacker, reg, victim["email"], f"guess {n}")
        locked = await try_sign_in(attacker, reg, victim["email"], victim["password"])  # even the right one
    assert locked.status_code == 429
    assert 0 < int(locked.headers["retry-after"]) <= 30
    assert "too many failed sign-ins for this account" in locked.text.lower()
    assert await flow.count("authz_login_sessions") == 0


async def test_an_address_failing_at_many_accounts_is_locked_out_of_all(tight: Flow) -> None:
    flow = tight
    reg = await flow.register()
    first, second, third = await flow.user(), await flow.user("admin"), await flow.user("student")
    with structlog.testing.capture_logs() as events:
        async with from_address(flow.client, flow, ATTACKER) as attacker:
            for user in (first, first, second, second):  # under the per-account threshold, 4 from the address
                assert (await try_sign_in(attacker, reg, user["email"], "guess")).status_code == 303
            locked = await try_sign_in(attacker, reg, third["email"], third["password"])
    assert locked.status_code == 429 and "from this address" in locked.text
    assert [e["rule"] for e in events if e["event"] == "login_locked"] == ["address"]
    async with from_address(flow.client, flow, OWNER) as owner:
        assert signed_in(await try_sign_in(owner, reg, third["email"], third["password"]))


async def test_an_account_failing_from_many_addresses_is_slowed_not_locked(tight: Flow) -> None:
    flow = tight
    reg = await flow.register()
    victim = await flow.user()
    for ip in (ATTACKER, OTHER_ATTACKER):  # 2 failures each: no address is locked, the account reaches 4
        async with from_address(flow.client, flow, ip) as attacker:
            for _ in range(2):
                assert (await try_sign_in(attacker, reg, victim["email"], "guess")).status_code == 303
    with structlog.testing.capture_logs() as events:
        async with from_address(flow.client, flow, THIRD_ATTACKER) as attacker:
            checked = await try_sign_in(attacker, reg, victim["email"], "guess")  # a clean address: checked
            slowed = await try_sign_in(attacker, reg, victim["email"], "guess")  # then it waits its turn
        async with from_address(flow.client, flow, OWNER) as owner:
            owner_signs_in = await try_sign_in(owner, reg, victim["email"], victim["password"])

    assert checked.status_code == 303
    assert slowed.status_code == 429
    assert 0 < int(slowed.headers["retry-after"]) <= 60
    assert "wait a moment between attempts" in slowed.text
    assert [(e["event"], e["ip"]) for e in events if e["event"].startswith("login_")] == [
        ("login_failed", THIRD_ATTACKER),
        ("login_locked", THIRD_ATTACKER),
        ("login_succeeded", OWNER),
    ]
    assert [e["rule"] for e in events if e["event"] == "login_locked"] == ["account_slowed"]
    assert signed_in(owner_signs_in), owner_signs_in.text


async def test_the_policy_holds_in_memory_while_redis_is_down(authz_settings) -> None:
    dead = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    limits = SignInLimits(with_settings(authz_settings, **TIGHT), dead)
    try:
        for _ in range(3):
            await limits.failed("victim", ATTACKER)
        attacker = await limits.refusal("victim", ATTACKER)
        assert attacker is not None and attacker.rule == "address_at_account" and 0 < attacker.retry_after <= 30
        assert await limits.refusal("victim", OWNER) is None  # the owner is not locked out
        await limits.failed("victim", OTHER_ATTACKER)  # the account's 4th failure: slowed
        assert await limits.refusal("victim", OWNER) is None  # a clean address's first attempt goes through
        slowed = await limits.refusal("victim", OWNER)
        assert slowed is not None and slowed.rule == "account_slowed" and 0 < slowed.retry_after <= 60
        for account in ("a", "b", "c"):  # THIRD_ATTACKER: 4 failures over three accounts
            await limits.failed(account, THIRD_ATTACKER)
        await limits.failed("a", THIRD_ATTACKER)
        everywhere = await limits.refusal("d", THIRD_ATTACKER)
        assert everywhere is not None and everywhere.rule == "address"
        assert await limits.refusal("d", OWNER_ELSEWHERE) is None
    finally:
        await dead.aclose()
