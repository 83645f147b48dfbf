"""One clock decides at the resource API: every statement that decides by the time takes
the application's clock as a parameter (the activity's retention, the analytics' default
period), so a frozen clock holds for them. PostgreSQL's clock only records (an item's
created_at, a change's `at`), as the storage modules say. Here the application's clock
runs ahead of PostgreSQL's, and each decision follows the application's."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from courseschool.common.clock import FrozenClock
from courseschool.resource_api.areas.registry import BY_NAME
from courseschool.resource_api.areas.rules import validate_document
from courseschool.resource_api.storage.items import PgItemStore

from .api_env import ApiEnv

DAY = 86400


@pytest.fixture
async def env(open_api_env: Callable[..., AbstractAsyncContextManager[Any]]) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


async def test_retention_removes_what_is_past_it_by_the_apps_clock(env: ApiEnv, clock: FrozenClock) -> None:
    """The app's clock 30 days ahead of PostgreSQL's: rows 61 and 60.5 days old by
    PostgreSQL's are 91 and 90.5 by the app's, past the 90 days of retention."""
    clock.advance(30 * DAY)
    now = dt.datetime.fromtimestamp(clock.now(), dt.UTC)
    school, grant = uuid.UUID(await env.school("acme")), uuid.uuid4()
    for days_ago in (91, 90, 89):
        await env.pool.execute(
            "INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at) "
            "VALUES ($1, $2, 'courses', 'c', 'u', $3, 1, $4)",
            grant,
            now.date() - dt.timedelta(days=days_ago),
            school,
            now - dt.timedelta(days=days_ago),
        )
    for days_ago in (90.5, 89.5):
        await env.pool.execute(
            "INSERT INTO api_activity_changes (at, grant_id, client_id, user_id, school_id, area, action) "
            "VALUES ($1, $2, 'c', 'u', $3, 'courses', 'create')",
            now - dt.timedelta(days=days_ago),
            grant,
            school,
        )
    assert await env.rs_app.state.resource_api.activity.housekeeping() == {"activity_reads": 1, "activity_changes": 1}
    days = await env.pool.fetch("SELECT $1::date - day AS ago FROM api_activity_reads ORDER BY ago", now.date())
    assert [r["ago"] for r in days] == [89, 90]
    kept = await env.pool.fetchval(
        "SELECT extract(epoch FROM $1::timestamptz - at) / 86400 FROM api_activity_changes", now
    )
    assert 89 < kept < 90


async def test_the_analytics_period_ends_at_the_apps_clock(env: ApiEnv, clock: FrozenClock) -> None:
    """Without `to`, the period ends at the app's now: an order the app's clock placed a
    minute ago counts, though it is still ahead of PostgreSQL's clock and the wall's."""
    token = await env.token("analytics:read")
    clock.advance(300)  # within the token's lifetime
    now = dt.datetime.fromtimestamp(clock.now(), dt.UTC)
    orders = BY_NAME["orders"]
    line = [{"product_type": "course", "product_id": str(uuid.uuid4()), "title": "Course", "unit_price": 4900}]
    order = {"number": "A-1", "customer_email": "c@example.test", "subtotal": 4900, "total": 4900, "items": line}
    placed = (now - dt.timedelta(minutes=1)).isoformat()
    document = validate_document(orders, {**order, "status": "paid", "placed_at": placed})
    await PgItemStore(env.pool).create(orders, await env.school("acme"), document)
    figures = (await env.api.get("/api/v1/analytics", headers=env.bearer(token))).json()
    assert figures["period"] == {"from": (now - dt.timedelta(days=30)).isoformat(), "to": now.isoformat()}
    assert figures["orders_paid"] == 1
