"""One clock (docs/design.md, "One clock"): every moment the authorization server records
and every decision it takes by the time are the application's clock
(`courseschool.common.clock`), passed to PostgreSQL as a parameter, never PostgreSQL's
`now()`. Here the application's clock is moved away from PostgreSQL's: what it says is
what counts."""

from __future__ import annotations

import re
from typing import Any

from courseschool.authz.components import Components
from courseschool.authz.maintenance import housekeeping
from courseschool.common.clock import FrozenClock

from .flow import Flow, Lifecycle

DAY = 86400
CSRF = re.compile(r'name="csrf" value="([^"]+)"')

# The columns PostgreSQL's clock writes (a column default or `now()`), and why no
# decision reads them: docs/design.md lists the same.
POSTGRES_CLOCK = {
    ("authz_schools", "created_at"): "shown to administrators",
    ("authz_users", "created_at"): "shown to administrators",
    ("authz_trusted_domains", "created_at"): "shown to administrators",
    ("authz_webhook_outbox", "next_attempt_at"): "the outbox lives on PostgreSQL's clock alone",
    ("authz_webhook_outbox", "delivered_at"): "the outbox lives on PostgreSQL's clock alone",
    ("authz_webhook_outbox", "abandoned_at"): "the outbox lives on PostgreSQL's clock alone",
    ("authz_mail_outbox", "next_attempt_at"): "the delivery's moments are PostgreSQL's alone, like the webhook's",
    ("authz_mail_outbox", "sent_at"): "the delivery's moments are PostgreSQL's alone, like the webhook's",
    ("authz_mail_outbox", "abandoned_at"): "the delivery's moments are PostgreSQL's alone, like the webhook's",
    # Made by key maintenance (on the application's clock) before this test moved it; keys
    # persist across tests.
    ("authz_signing_keys", "created_at"): "written before the clock moved",
    ("authz_signing_keys", "activated_at"): "written before the clock moved",
    ("authz_signing_keys", "retired_at"): "written before the clock moved",
}


def _components(flow: Flow) -> Components:
    return flow.client.app.state.authz  # type: ignore[attr-defined]


async def test_a_code_the_application_calls_expired_is_refused_while_postgres_calls_it_fresh(
    flow: Flow, clock: FrozenClock
) -> None:
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, await flow.user())
    clock.advance(10 * 60)  # codes live a minute; PostgreSQL's now() has hardly moved
    refused = await flow.exchange(reg, callback["code"], verifier)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


async def test_housekeeping_removes_what_the_applications_clock_says_is_spent(flow: Flow, clock: FrozenClock) -> None:
    reg, user = await flow.register(), await flow.user()
    await flow.authorize(reg, user)
    c = _components(flow)
    assert (await housekeeping(c))["codes"] == 0
    clock.advance(2 * DAY)  # the code and the 12-hour sign-in ended a day and more ago, by the application's clock
    done = await housekeeping(c)
    assert (done["codes"], done["sessions"]) == (1, 1)


async def test_an_ended_grant_leaves_the_revocation_feed_by_the_applications_clock(
    flow: Flow, clock: FrozenClock
) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    life = Lifecycle(flow)
    assert (await life.revoke(reg, tokens["access_token"])).status_code == 200
    assert (await life.revoke(reg, tokens["refresh_token"])).status_code == 200
    revoker = _components(flow).revoker
    first = await revoker.current()
    assert len(first["grant_ids"]) == 1 and len(first["jtis"]) == 1
    clock.advance(_components(flow).settings.access_token_ttl + 10 * 60)
    assert await revoker.current() == {"grant_ids": [], "jtis": []}  # every token they could stop has expired


async def test_a_revoked_grant_is_kept_for_its_retention_by_the_applications_clock(
    flow: Flow, clock: FrozenClock
) -> None:
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    assert (await Lifecycle(flow).revoke(reg, tokens["refresh_token"])).status_code == 200
    c = _components(flow)
    assert (await housekeeping(c))["revoked_grants"] == 0
    clock.advance(c.settings.revoked_grant_retention + 60)
    assert (await housekeeping(c))["revoked_grants"] == 1


async def _moments_near_postgres_now(flow: Flow) -> list[str]:
    """Every authz column of a time, with a value written within a day of PostgreSQL's
    now() (the test's application clock is ten days behind it)."""
    columns = await flow.pool.fetch(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name LIKE 'authz%' AND data_type LIKE 'timestamp%'"
    )
    near: list[str] = []
    for table, column in ((r["table_name"], r["column_name"]) for r in columns):
        if (table, column) in POSTGRES_CLOCK:
            continue
        count = await flow.pool.fetchval(f"SELECT count(*) FROM {table} WHERE \"{column}\" > now() - interval '1 day'")
        if count:
            near.append(f"{table}.{column}")
    return near


async def test_every_moment_the_server_records_is_the_applications(flow: Flow, clock: FrozenClock) -> None:
    clock.advance(-10 * DAY)
    life = Lifecycle(flow)
    user = await flow.user()
    reg = await flow.register()
    tokens = await flow.tokens(reg, user)
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 200
    assert (await life.revoke(reg, tokens["access_token"])).status_code == 200
    integration = await flow.integration("Clocked integration")
    await flow.tokens(integration, user)  # its consent is remembered
    second = await flow.tokens(reg, user)
    assert (await life.revoke(reg, second["refresh_token"])).status_code == 200
    page = await flow.client.get("/oauth/logout")
    signed_out = await flow.client.post("/oauth/logout", data={"csrf": CSRF.search(page.text).group(1)})
    assert signed_out.status_code == 200
    c = _components(flow)
    await c.admin_store.disable_client(integration["client_id"])
    await c.admin_store.set_disabled(user["id"], True)
    await c.events.flush()
    assert await flow.count("authz_login_sessions WHERE ended_at IS NOT NULL") >= 1
    assert await flow.count("authz_consents") == 1
    near: list[Any] = await _moments_near_postgres_now(flow)
    assert near == [], f"written by PostgreSQL's clock, not the application's: {near}"
