"""A steward's decision for the whole school (its two-step rule, its app policy, an app
approved, declined, withdrawn, blocked or unblocked, a person's access ended) needs a
recent sign-in like a change of one's own account: an hour after signing in, the answer
is the confirmation page and nothing changes (independent review, 28 Nov 2026, finding
5). tests/unit/test_account_changes_need_a_recent_sign_in.py walks every such route."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock

from .conftest import serve
from .flow import Flow, csrf_of
from .sign_in import with_settings
from .test_school_blocks import PAGE, _sign_in_as

RECENT = 300


@pytest.fixture
async def strict(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, clock: FrozenClock
) -> AsyncIterator[Flow]:
    settings = with_settings(authz_settings, recent_sign_in=RECENT)
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_lowering_the_schools_two_step_rule_needs_a_recent_sign_in(strict: Flow, clock: FrozenClock) -> None:
    owner = await strict.user("owner")
    await _sign_in_as(strict, owner)
    csrf = csrf_of((await strict.client.get("/oauth/school/security")).text)
    done = await strict.client.post("/oauth/school/security", data={"csrf": csrf, "required": "everyone"})
    assert done.status_code == 303 and "done" in done.headers["location"]
    clock.advance(RECENT + 1)
    asked = await strict.client.post("/oauth/school/security", data={"csrf": csrf, "required": "none"})
    assert asked.status_code == 303
    assert asked.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fschool%2Fsecurity"
    assert await strict.pool.fetchval("SELECT required FROM authz_school_two_step") == "everyone"


async def test_the_app_policy_an_hour_after_signing_in_asks_first(strict: Flow, clock: FrozenClock) -> None:
    owner = await strict.user("owner")
    await _sign_in_as(strict, owner)
    csrf = csrf_of((await strict.client.get(PAGE)).text)
    clock.advance(3600)
    asked = await strict.client.post(f"{PAGE}/policy", data={"csrf": csrf, "policy": "approved_only"})
    assert asked.status_code == 303
    assert asked.headers["location"] == "/oauth/account/confirm?next=%2Foauth%2Fschool%2Fapps"
    assert await strict.count("authz_school_app_policies") == 0
    confirm = await strict.client.get(asked.headers["location"])
    right = await strict.client.post(
        "/oauth/account/confirm",
        data={"csrf": csrf_of(confirm.text), "password": owner["password"], "next": PAGE},
    )
    assert right.status_code == 303 and right.headers["location"] == PAGE
    done = await strict.client.post(f"{PAGE}/policy", data={"csrf": csrf, "policy": "approved_only"})
    assert done.status_code == 303 and done.headers["location"] == f"{PAGE}?done=policy"
    assert await strict.pool.fetchval("SELECT policy FROM authz_school_app_policies") == "approved_only"
