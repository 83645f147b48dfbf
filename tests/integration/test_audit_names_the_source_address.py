"""Security review, finding 22: the audit events of failed sign-ins and lockouts name
the address the attempt came from (the caller address the web layer sees)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import structlog

from courseschool.authz.app import create_app

from .conftest import serve
from .flow import Flow
from .sign_in import from_address, try_sign_in, with_settings

ATTACKER = "203.0.113.22"


@pytest.fixture
async def three_strikes(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    async with serve(create_app(with_settings(authz_settings, login_lockout_threshold=3), clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_failed_sign_ins_and_lockouts_carry_the_source_address(three_strikes: Flow) -> None:
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user()
    with structlog.testing.capture_logs() as events:
        async with from_address(flow.client, flow, ATTACKER) as attacker:
            for n in range(4):  # three failures lock the address out; the fourth is refused
                await try_sign_in(attacker, reg, victim["email"], f"guess {n}")
            await try_sign_in(attacker, reg, "nobody@example.test", "guess")
    audited = [e for e in events if e.get("audit")]
    by_event = {
        name: [e for e in audited if e["event"] == name] for name in ("login_failed", "account_locked", "login_locked")
    }
    assert len(by_event["login_failed"]) == 4 and len(by_event["account_locked"]) == 1
    assert len(by_event["login_locked"]) == 1
    for name, found in by_event.items():
        assert all(e["ip"] == ATTACKER for e in found), f"{name} does not name the source address"
    assert by_event["login_failed"][-1]["subject"] is None  # the unknown account: still its address
