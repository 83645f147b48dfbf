"""Issue 41, item 2: a Redis failover. A master, its replica and three sentinels of the
test's own on this machine (sentinels.RedisWithSentinels), and the production topology
(tests/support/split.py) with REDIS_SENTINEL_MASTER / REDIS_SENTINELS set for every
service, the migration step and the admin command. Under load (refresh lineages rotating,
sign-ins, API reads, revocations) the master is killed (SIGKILL) and the sentinels
promote the replica:

- sign-in and token refresh work again within RECOVERY_BOUND seconds of the kill;
- the window is answered with the JSON 503 and nothing else: no 500, no traceback;
- each resource API worker's revocation feed re-subscribes to the promoted master;
- a revocation made in the window, and one made after the failover, reach the resource
  API within the fan-out bound (`common/revocation.FANOUT_BOUND`): the API is read with
  the revoked access token until refused, bounded.

And the feed on its own, over a client of the sentinels: it follows the promoted master
and hears what is published there."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import msgspec
import pytest

from courseschool.common.jose import new_kek
from courseschool.common.redis import SentinelTarget, create_redis, deployment_channel, parse_sentinels
from courseschool.common.revocation import CHANNEL, FANOUT_BOUND, RevocationEvent, grant_key
from courseschool.resource_api.auth.revocation_feed import RevocationFeed

from ..support.deployment import NGINX_MISSING, find_tool
from ..support.split import Topology, running_topology
from .sentinels import MASTER_NAME, RedisWithSentinels
from .servers import OwnPostgres, server_folder
from .test_faults import _refresh, _tokens, _until
from .test_postgres_crash_answers_503 import _log_problems
from .test_postgres_failover import Load

CHAINS = 4  # refresh lineages rotating side by side
LOAD_BEFORE = 1.5  # seconds of load before the kill
# Seconds from the kill of the master until every lineage refreshes again and a whole
# sign-in (authorize, sign-in page, password, consent, code exchange) succeeds. With the
# sentinels' DOWN_AFTER_MS of 1 s, measured on a shared two-core machine: 1.5 to 3 s, of
# which the sentinels' agreement and promotion take 1.3 to 2.5; the platform's own share
# is its next connection, which asks the sentinels again. A deployment's is its
# down-after-milliseconds plus about two seconds.
RECOVERY_BOUND = 8.0
# Seconds from the promotion until every resource API worker's feed is subscribed again:
# its retries back off up to 2 s (revocation_feed.RESUBSCRIBE_CAP).
FEED_BACK_BOUND = 6.0
SLACK = 1.0  # the API call's own time, on a loaded machine: the bound is the feed's


@dataclass(frozen=True)
class Principal:
    grant_id: str | None
    jti: str | None = None


@pytest.fixture
def sentinels() -> Iterator[RedisWithSentinels]:
    folder = server_folder()
    try:
        made = RedisWithSentinels(folder / "redis")
        try:
            yield made
        finally:
            made.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def sentinel_topology(sentinels: RedisWithSentinels, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    nginx = find_tool("nginx")
    if nginx is None:
        pytest.skip(NGINX_MISSING)
    folder = server_folder()
    pg = OwnPostgres(folder / "pg")
    through = {"REDIS_SENTINEL_MASTER": MASTER_NAME, "REDIS_SENTINELS": sentinels.sentinels}
    overrides = {name: dict(through) for name in ("authz", "resource-api", "discovery", "migrate")}
    overrides["authz"].update({"RATE_TOKEN_PER_IP": "1000000/60", "RATE_TOKEN_PER_CLIENT": "1000000/60"})
    try:
        with running_topology(
            pg.dsn, sentinels.url, new_kek(), tmp_path_factory.mktemp("split-sentinel"), nginx, overrides=overrides
        ) as running:
            yield running
    finally:
        pg.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
async def feed(sentinels: RedisWithSentinels) -> AsyncIterator[RevocationFeed]:
    client = create_redis(sentinels.url, SentinelTarget(MASTER_NAME, parse_sentinels(sentinels.sentinels)))
    made = RevocationFeed(client)
    made.start()
    try:
        yield made
    finally:
        await made.stop()
        await client.aclose()


async def _wait(check, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_revocation_feed_follows_the_master_the_sentinels_name(
    sentinels: RedisWithSentinels, feed: RevocationFeed
) -> None:
    publisher = create_redis(sentinels.url, SentinelTarget(MASTER_NAME, parse_sentinels(sentinels.sentinels)))
    channel = deployment_channel(publisher, CHANNEL)
    try:
        assert await feed.wait_healthy(10)
        await publisher.set(grant_key("before"), "1")
        await publisher.publish(channel, msgspec.json.encode(RevocationEvent(grant_id="before")))
        assert await _wait(lambda: feed.revoked(Principal("before")), 5)

        sentinels.kill_master()
        assert await _wait(lambda: not feed.healthy, 5), "the feed trusted its memory with its master gone"
        await asyncio.to_thread(sentinels.wait_for_promotion)
        assert await _wait(lambda: feed.healthy, FEED_BACK_BOUND), "the feed did not subscribe to the new master"
        assert feed.revoked(Principal("before"))  # still revoked after the reload from the new master

        assert await publisher.publish(channel, msgspec.json.encode(RevocationEvent(grant_id="after"))) == 1
        assert await _wait(lambda: feed.revoked(Principal("after")), 5), "a message on the new master went unheard"
        assert sentinels.master_port() == sentinels.ports[1]
    finally:
        await publisher.aclose()


def _feed_events(topology: Topology, since_line: int) -> tuple[int, int]:
    """How many resource API workers lost and subscribed again to the feed, in the log
    lines from `since_line` on."""
    lost = connected = 0
    lines = topology.services["resource-api"].log_path.read_text(errors="replace").splitlines()[since_line:]
    for line in lines:
        if line.startswith("{"):
            event = json.loads(line).get("event")
            lost += event == "revocation_feed_lost"
            connected += event == "revocation_feed_connected"
    return lost, connected


def _log_length(topology: Topology) -> int:
    return len(topology.services["resource-api"].log_path.read_text(errors="replace").splitlines())


async def _refused_within(http: httpx.AsyncClient, topology: Topology, access: str, seconds: float) -> float:
    """Reads the API with the access token until it is refused; how long that took."""
    began = time.monotonic()
    bearer = {"Authorization": f"Bearer {access}"}
    while time.monotonic() - began < seconds:
        response = await http.get(f"{topology.base_url}/api/v1/courses", headers=bearer)
        assert response.status_code in (200, 401, 503), response.text
        if response.status_code == 401:
            return time.monotonic() - began
        await asyncio.sleep(0.05)
    raise AssertionError(f"the revoked token still read the API {seconds} s after its revocation")


async def _revoked_and_refused(
    http: httpx.AsyncClient, topology: Topology, load: Load, victim: tuple
) -> tuple[float, float]:
    """Revoke the victim's grant (its refresh token), retried while answered 503, then
    read the API with its access token until refused, within the fan-out bound: the
    monotonic time of the revocation's 200, and the seconds from it to the refusal."""
    reg, tokens, _, _ = victim
    form = {"token": tokens["refresh_token"], "client_id": reg["client_id"]}
    deadline = time.monotonic() + RECOVERY_BOUND + 20  # as generous as the recovery waits below
    while True:
        response = await load.call("revoke", http.post(f"{topology.base_url}/api/oauth/revoke", data=form))
        if response is not None and response.status_code == 200:
            answered = time.monotonic()
            await _refused_within(http, topology, tokens["access_token"], FANOUT_BOUND + SLACK)
            return answered, time.monotonic() - answered
        assert time.monotonic() < deadline, f"the revocation was not answered 200 within the bound: {response}"
        await asyncio.sleep(0.05)


async def test_a_failover_keeps_sign_in_refresh_and_revocations_going(
    sentinels: RedisWithSentinels, sentinel_topology: Topology
) -> None:
    topology = sentinel_topology
    load = Load()
    signed_in: list[tuple[float, float]] = []  # (started, answered) of each whole sign-in that succeeded
    failed_sign_ins: list[float] = []  # when each sign-in that met an error on its way started
    async with httpx.AsyncClient(timeout=15) as http:
        lineages = [await _tokens(http, topology) for _ in range(CHAINS)]
        victims = [await _tokens(http, topology) for _ in range(2)]
        reader = await _tokens(http, topology)
        for _, tokens, _, _ in victims:  # verified and remembered by the API before the failover
            bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
            assert (await http.get(f"{topology.base_url}/api/v1/courses", headers=bearer)).status_code == 200

        async def rotate(n: int) -> None:
            reg, tokens = lineages[n][0], lineages[n][1]
            load.latest[n] = tokens["refresh_token"]
            while not load.stop.is_set():
                response = await load.call("refresh", _refresh(http, topology, reg, load.latest[n]), n)
                if response is not None and response.status_code == 200:
                    load.latest[n] = response.json()["refresh_token"]
                elif response is not None and response.status_code == 400:
                    return  # the lineage is broken: the assertions below say how
                await asyncio.sleep(0.05)

        async def sign_in_again_and_again() -> None:
            while not load.stop.is_set():
                started = time.monotonic()
                try:
                    await _tokens(http, topology)
                except (AssertionError, httpx.HTTPError, KeyError, ValueError):
                    failed_sign_ins.append(started)
                    await asyncio.sleep(0.1)  # a 503 on the way: the person tries again
                else:
                    signed_in.append((started, time.monotonic()))

        async def read_the_api() -> None:
            bearer = {"Authorization": f"Bearer {reader[1]['access_token']}"}
            while not load.stop.is_set():
                await load.call("read", http.get(f"{topology.base_url}/api/v1/courses", headers=bearer))
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(rotate(n)) for n in range(CHAINS)]
        tasks += [asyncio.create_task(sign_in_again_and_again()), asyncio.create_task(read_the_api())]
        try:
            await asyncio.sleep(LOAD_BEFORE)
            log_from = _log_length(topology)
            killed_at = time.monotonic()
            await asyncio.to_thread(sentinels.kill_master)
            # Revoked in the window: its message has no master to go to.
            in_window = asyncio.create_task(_revoked_and_refused(http, topology, load, victims[0]))
            await asyncio.to_thread(sentinels.wait_for_promotion)
            promoted_at = time.monotonic()

            async def back() -> bool:
                return len(_refreshed(load, promoted_at)) == CHAINS and any(s > promoted_at for s, _ in signed_in)

            assert await _until(back, RECOVERY_BOUND + 20), (_refreshed(load, promoted_at), signed_in[-3:])
            recovered_at = time.monotonic()

            async def resubscribed() -> bool:
                lost, connected = _feed_events(topology, log_from)
                return lost >= 1 and connected >= lost

            assert await _until(resubscribed, FEED_BACK_BOUND + 10), _feed_events(topology, log_from)
            fed_at = time.monotonic()
            revoked_in_window, in_window_took = await asyncio.wait_for(in_window, 30)
            revoked_after, after_took = await _revoked_and_refused(http, topology, load, victims[1])
        finally:
            load.stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            assert task.exception() is None, task.exception()

    first_sign_in = min(answered for started, answered in signed_in if started > promoted_at)
    recovery = max([*_refreshed(load, promoted_at).values(), first_sign_in]) - killed_at
    print(
        f"\nredis failover: promotion {promoted_at - killed_at:.2f} s after the kill, sign-in and every lineage "
        f"back {recovery:.2f} s after it, feeds subscribed {fed_at - promoted_at:.2f} s after the promotion "
        f"(within {recovered_at - killed_at:.2f} s checked); a revocation answered {revoked_in_window - killed_at:.2f} s "
        f"after the kill refused by the API {in_window_took:.2f} s after its answer, one answered "
        f"{revoked_after - promoted_at:.2f} s after the promotion in {after_took:.2f} s; 503s: "
        f"{sum(a.status == 503 for a in load.answers)} of {len(load.answers)} answers, "
        f"{len(failed_sign_ins)} sign-ins failed on the way, {len(signed_in)} succeeded"
    )
    failed = [a for a in load.answers if a.status not in (200, 503)]
    assert not failed, f"answers other than 200 and 503 (a 500, no answer, a lineage lost): {failed[:10]}"
    assert all(a.error == "temporarily_unavailable" for a in load.answers if a.status == 503 and a.kind != "read")
    assert recovery <= RECOVERY_BOUND, f"sign-in and refresh worked again {recovery:.1f} s after the kill"
    assert killed_at < revoked_in_window < promoted_at, "the first revocation was not answered in the window"
    assert revoked_after > fed_at, "the second revocation was not made after the failover"
    assert not _log_problems(topology), "\n".join(_log_problems(topology)[:10])
    for name, service in topology.services.items():
        assert service.running(), f"{name} died: the services ride through a failover"


def _refreshed(load: Load, since: float) -> dict[int, float]:
    """Per lineage, when its first refresh started after `since` was answered 200."""
    back: dict[int, float] = {}
    for a in load.answers:
        if a.kind == "refresh" and a.lineage is not None and a.status == 200 and a.started > since:
            back.setdefault(a.lineage, a.at)
    return back
