"""Issue 38, T4-3 and item 10: the webhook's deliveries went one at a time, oldest first,
so a receiver that refused or a flood of older deliveries held back newer security
events, and a person's events could arrive out of order. Now each person's deliveries
(each client's, for events about no person) go in order, numbered; streams go side by
side; security events go before new connections. The payload names the app, the school
and the person next to the ids; the backlog is in /metrics."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.webhook import WebhookDelivery
from courseschool.common.logging import audit

from ..support.tls import HttpsServer, Reply, https_server
from .conftest import serve
from .flow import Flow
from .test_events_webhook import SECRET, _components, _deliver, _header
from .test_metrics import _value

PATH = "/hooks/course-school"


@pytest.fixture
async def hooked(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, tmp_path: Path
) -> AsyncIterator[tuple[Flow, HttpsServer]]:
    """The app with its webhook at a local HTTPS receiver; each test sends each pass itself."""
    with https_server(tmp_path) as (receiver, ca):
        settings = AuthzSettings(
            **{
                **msgspec.structs.asdict(authz_settings),
                "events_webhook_url": receiver.url(PATH),
                "events_webhook_secret": SECRET,
                "events_webhook_ca_bundle": str(ca),
                "events_webhook_interval": 3600.0,
            }
        )
        async with serve(create_app(settings)) as client:
            yield Flow(client, clean_db, redis_client), receiver


def _bodies(receiver: HttpsServer) -> list[dict[str, Any]]:
    return [msgspec.json.decode(p.body) for p in receiver.posts]


async def test_a_persons_deliveries_go_in_order_and_a_refused_one_holds_back_no_one_else(
    hooked: tuple[Flow, HttpsServer],
) -> None:
    flow, receiver = hooked
    person = await flow.user("owner")
    reg = await flow.register(client_name="Ordered CLI")
    await flow.tokens(reg, person)
    await flow.tokens(reg, person)  # a second sign-in of the app: the person's second delivery
    receiver.replies[PATH] = Reply(b"busy", 503)
    assert await _deliver(flow) == 0
    tried = _bodies(receiver)
    assert sorted(b["action"] for b in tried) == ["client_registered", "consent_given"]  # one per stream
    first = next(b for b in tried if b["action"] == "consent_given")
    assert (first["stream"], first["sequence"]) == (f"user:{person['id']}", 1)

    # The person's first delivery backs off; someone else's events go meanwhile.
    someone = str(uuid.uuid4())
    audit("consent_given", actor="user", subject=someone, client_id=reg["client_id"])
    await flow.register(client_name="Other CLI")
    receiver.replies[PATH] = Reply(b"{}")
    receiver.posts.clear()
    assert await _deliver(flow) == 2  # the other client's registration and the other person's connection
    assert [b["subject"] for b in _bodies(receiver) if b["action"] == "consent_given"] == [someone]

    await flow.pool.execute("UPDATE authz_webhook_outbox SET next_attempt_at = now()")
    receiver.posts.clear()
    assert await _deliver(flow) == 3
    mine = [(b["sequence"], b["action"]) for b in _bodies(receiver) if b["subject"] == person["id"]]
    assert mine == [(1, "consent_given"), (2, "consent_given")]


async def test_the_payload_names_the_app_the_school_and_the_person(hooked: tuple[Flow, HttpsServer]) -> None:
    flow, receiver = hooked
    person = await flow.user("owner")
    reg = await flow.register(client_name="Named CLI")
    await flow.tokens(reg, person)
    assert await _deliver(flow) == 2
    connected = next(b for b in _bodies(receiver) if b["action"] == "consent_given")
    slug = await flow.pool.fetchval("SELECT slug FROM authz_schools WHERE id = $1", uuid.UUID(person["school_id"]))
    assert connected["client_name"] == "Named CLI" and connected["client_id"] == reg["client_id"]
    assert connected["school"] == slug and connected["school_id"] == person["school_id"]
    assert connected["email"] == person["email"] and connected["subject"] == person["id"]


async def test_a_security_event_goes_before_a_flood_of_older_connections(hooked: tuple[Flow, HttpsServer]) -> None:
    flow, receiver = hooked
    reg = await flow.register(client_name="Flooded CLI")
    await _deliver(flow)
    receiver.posts.clear()
    for _ in range(30):  # thirty people connect, each a stream of their own
        audit("consent_given", actor="user", subject=str(uuid.uuid4()), client_id=reg["client_id"])
    audit("refresh_reused", actor="client", subject=str(uuid.uuid4()), client_id=reg["client_id"])
    await _components(flow).events.flush()
    one_at_a_time = WebhookDelivery(_components(flow).settings, flow.pool, _components(flow).clock, batch=1)
    try:
        assert await one_at_a_time.deliver_due() == 1
    finally:
        await one_at_a_time.stop()
    assert [b["action"] for b in _bodies(receiver)] == ["refresh_reused"]


async def test_the_backlog_is_in_the_metrics(hooked: tuple[Flow, HttpsServer]) -> None:
    flow, receiver = hooked
    before = (await flow.client.get("/metrics")).text
    receiver.replies[PATH] = Reply(b"busy", 503)
    await flow.register(client_name="Backlogged CLI")
    await flow.register(client_name="Backlogged too")
    assert await _deliver(flow) == 0
    await flow.pool.execute(
        "UPDATE authz_webhook_outbox SET abandoned_at = now() WHERE id = (SELECT min(id) FROM authz_webhook_outbox)"
    )
    await _components(flow).webhook.sample()
    after = (await flow.client.get("/metrics")).text
    assert _value(after, "courseschool_webhook_outbox_deliveries", state="pending") == 1
    assert _value(after, "courseschool_webhook_outbox_deliveries", state="retrying") == 1
    assert _value(after, "courseschool_webhook_outbox_deliveries", state="abandoned") == 1
    assert _value(after, "courseschool_webhook_outbox_oldest_pending_seconds") >= 0
    failed = _value(after, "courseschool_webhook_sends_total", result="failed")
    assert failed - _value(before, "courseschool_webhook_sends_total", result="failed") == 2


async def test_two_replicas_through_refusals_and_a_hang_deliver_everything_once_in_order(
    hooked: tuple[Flow, HttpsServer],
) -> None:
    """Two replicas' delivery loops at once, against a receiver that refuses four posts,
    then holds one past the time limit, then takes the rest: every delivery arrives, none
    is sent more often than it was claimed, and within a stream a delivery is first sent
    only after the one before it was taken."""
    flow, receiver = hooked
    people = [str(uuid.uuid4()) for _ in range(3)]
    for _ in range(4):
        for person in people:
            audit("consent_given", actor="user", subject=person, client_id="a-client")
    await _components(flow).events.flush()
    receiver.post_replies[PATH] = [Reply(b"busy", 503)] * 4 + [Reply(b"{}", delay=1.5)]
    fast = AuthzSettings(
        **{
            **msgspec.structs.asdict(_components(flow).settings),
            "events_webhook_timeout": 0.5,
            "events_webhook_interval": 0.05,
        }
    )
    replicas = [WebhookDelivery(fast, flow.pool, _components(flow).clock) for _ in range(2)]
    for replica in replicas:
        replica.start()
    try:
        async with asyncio.timeout(60):  # refused ones come back after 2 s, 4 s: their backoff
            while await flow.pool.fetchval("SELECT count(*) FROM authz_webhook_outbox WHERE delivered_at IS NULL"):
                await asyncio.sleep(0.1)
    finally:
        for replica in replicas:
            await replica.stop()
    rows = await flow.pool.fetch("SELECT id, attempts, stream, sequence FROM authz_webhook_outbox")
    assert len(rows) == 12
    posted = [int(_header(p, "X-Course-School-Delivery")) for p in receiver.posts]
    for row in rows:
        # No send without its own claim; a claim may reach no one (on a loaded machine the
        # 0.5 s limit can end an attempt before its connection is made), never the reverse.
        assert 1 <= posted.count(row["id"]) <= row["attempts"], (row, posted)
    by_stream: dict[str, list[Any]] = {}
    for row in sorted(rows, key=lambda r: r["sequence"]):
        by_stream.setdefault(row["stream"], []).append(row["id"])
    for stream, ids in by_stream.items():
        for earlier, later in itertools.pairwise(ids):
            last_of_earlier = max(i for i, d in enumerate(posted) if d == earlier)
            assert last_of_earlier < posted.index(later), (stream, posted)
