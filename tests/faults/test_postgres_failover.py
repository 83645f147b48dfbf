"""Issue 41, item 1: a PostgreSQL failover. Two servers of the test's own on this machine,
a primary and its synchronous streaming standby (servers.PostgresPair), and the production
topology (tests/support/split.py) over a multi-host DATABASE_URL with
`target_session_attrs=read-write`. Under load (refresh lineages rotating, revocations
being made) the primary is killed (SIGKILL, as the OOM killer or a lost machine does) and
the standby promoted at once, as an orchestrator would (Patroni, CloudNativePG):

- nothing acknowledged is lost: every lineage's last token refreshes again, and is its
  grant's only live one (no lineage lost, none forked); every revocation answered 200
  stays revoked (the refresh token refused, the access token inactive and refused by the API);
- the window is answered with the JSON 503 and nothing else: no 500, no request held
  past the pool's connect timeout, no traceback in any log;
- every lineage refreshes again within RECOVERY_BOUND seconds of the kill.

And the pool on its own: a primary fenced read-only (a demotion) while the standby is
promoted: the write that meets it fails read-only, the next one reaches the new primary."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field

import asyncpg
import httpx
import pytest

from courseschool.common.db import create_pool
from courseschool.common.jose import new_kek
from courseschool.common.secrets import digest

from ..support.deployment import NGINX_MISSING, find_tool
from ..support.split import Topology, running_topology
from .servers import OwnRedis, PostgresPair, server_folder
from .test_faults import _refresh, _tokens, _until
from .test_postgres_crash_answers_503 import _log_problems

pytestmark = pytest.mark.skipif(find_tool("nginx") is None, reason=NGINX_MISSING)

CHAINS = 6  # refresh lineages rotating side by side
REVOKED = 12  # grants revoked one after the other, before, during and after the failover
LOAD_BEFORE = 2.0  # seconds of load before the kill
LOAD_AFTER = 2.0  # seconds of load once every lineage refreshed again
# Seconds from the kill of the primary (the standby promoted right after it) until every
# lineage refreshes again. Measured on a shared two-core machine: 2.2 to 3.2 s, of which
# the promotion (pg_ctl promote -w) takes 1.9 to 2.7; the platform's own share is its next
# connection through the host list. Below REFRESH_TOKEN_GRACE (10 s) on purpose: a
# rotation committed but not answered before the kill is retried inside the window.
RECOVERY_BOUND = 8.0
# No request waits longer than the pool's connect timeout (3 s, common.db) and a margin.
SLOWEST = 5.0


@dataclass
class Answer:
    kind: str  # "refresh" or "revoke"
    at: float  # monotonic time the answer came
    took: float
    status: int | None  # None: no HTTP answer at all
    error: str = ""
    lineage: int | None = None

    @property
    def started(self) -> float:
        return self.at - self.took


@dataclass
class Load:
    answers: list[Answer] = field(default_factory=list)
    latest: dict[int, str] = field(default_factory=dict)  # lineage -> the refresh token it holds
    revoked: list[int] = field(default_factory=list)  # victims whose revocation was answered 200
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def call(
        self, kind: str, request: Awaitable[httpx.Response], lineage: int | None = None
    ) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response: httpx.Response | None = await request
        except httpx.HTTPError:
            response = None
        status = response.status_code if response is not None else None
        error = ""
        if response is not None and response.status_code != 200:
            error = response.json().get("error", "") if "json" in response.headers.get("content-type", "") else "?"
        self.answers.append(Answer(kind, time.monotonic(), time.monotonic() - started, status, error, lineage))
        return response


@pytest.fixture
def pair() -> Iterator[PostgresPair]:
    folder = server_folder()
    try:
        made = PostgresPair(folder / "pg")
        try:
            yield made
        finally:
            made.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def failover_topology(pair: PostgresPair, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    folder = server_folder()
    redis = OwnRedis(folder)
    nginx = find_tool("nginx")
    assert nginx is not None
    load = {"authz": {"RATE_TOKEN_PER_IP": "1000000/60", "RATE_TOKEN_PER_CLIENT": "1000000/60"}}  # the load is ours
    try:
        with running_topology(
            pair.dsn, redis.url, new_kek(), tmp_path_factory.mktemp("split-failover"), nginx, overrides=load
        ) as running:
            yield running
    finally:
        redis.close()
        shutil.rmtree(folder, ignore_errors=True)


async def test_a_pool_on_a_fenced_primary_finds_the_promoted_standby(pair: PostgresPair) -> None:
    pool = await create_pool(pair.dsn, min_size=2, max_size=2)
    try:
        assert await pool.fetchval("SELECT inet_server_port()") == pair.ports[0]
        await pool.execute("CREATE TABLE written (n int)")  # on the standby too, synchronously
        # The old primary is fenced (it refuses writes from now on, its sessions stay
        # open) and the standby promoted.
        pair.sql(0, "ALTER SYSTEM SET default_transaction_read_only = on")
        pair.sql(0, "SELECT pg_reload_conf()")
        await asyncio.to_thread(pair.promote_standby)
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
            await pool.execute("INSERT INTO written VALUES (1)")
        await pool.execute("INSERT INTO written VALUES (2)")
        assert await pool.fetchval("SELECT inet_server_port()") == pair.ports[1]
        assert await pool.fetchval("SELECT array_agg(n) FROM written") == [2]
    finally:
        await pool.close()


async def test_a_failover_under_load_loses_no_lineage_and_revives_no_revoked_token(
    pair: PostgresPair, failover_topology: Topology
) -> None:
    topology = failover_topology
    base = topology.base_url
    load = Load()
    async with httpx.AsyncClient(timeout=15) as http:
        lineages = [await _tokens(http, topology) for _ in range(CHAINS)]
        victims = [await _tokens(http, topology) for _ in range(REVOKED)]

        async def rotate(n: int) -> None:
            reg, tokens = lineages[n][0], lineages[n][1]
            load.latest[n] = tokens["refresh_token"]
            while not load.stop.is_set():
                response = await load.call("refresh", _refresh(http, topology, reg, load.latest[n]), n)
                if response is not None and response.status_code == 200:
                    load.latest[n] = response.json()["refresh_token"]
                elif response is not None and response.status_code == 400:
                    return  # the lineage is broken: the assertions below say how
                await asyncio.sleep(0.02)  # a 503 or no answer: the same token again

        async def revoke_one_after_the_other() -> None:
            for n, (reg, tokens, _, _) in enumerate(victims):
                while not load.stop.is_set():
                    form = {"token": tokens["refresh_token"], "client_id": reg["client_id"]}
                    response = await load.call("revoke", http.post(f"{base}/api/oauth/revoke", data=form))
                    if response is not None and response.status_code == 200:
                        load.revoked.append(n)
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.3)

        tasks = [asyncio.create_task(rotate(n)) for n in range(CHAINS)]
        revoker = asyncio.create_task(revoke_one_after_the_other())
        tasks.append(revoker)
        try:
            await asyncio.sleep(LOAD_BEFORE)
            killed_at = time.monotonic()
            await asyncio.to_thread(pair.crash_primary)
            dead_at = time.monotonic()  # a request started from now on cannot reach the old primary
            await asyncio.to_thread(pair.promote_standby)
            promoted_at = time.monotonic()

            async def check() -> bool:
                back = _back(load, dead_at)
                return len(back) == CHAINS or any(task.done() for task in tasks[:CHAINS])

            await _until(check, RECOVERY_BOUND + 20)
            await asyncio.wait([revoker], timeout=30)  # the lineages rotate on while the last revocations are made
            await asyncio.sleep(LOAD_AFTER)
        finally:
            load.stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            assert task.exception() is None, task.exception()

        back = _back(load, dead_at)
        recovery = max(back.values(), default=float("inf")) - killed_at
        slowest = max(a.took for a in load.answers)
        revocations = [a for a in load.answers if a.kind == "revoke" and a.status == 200]
        print(
            f"\nfailover: promotion {promoted_at - killed_at:.2f} s, every lineage back {recovery:.2f} s "
            f"after the kill; slowest answer {slowest:.2f} s; revocations answered 200: "
            f"{sum(a.at < killed_at for a in revocations)} before the kill, {sum(a.at > killed_at for a in revocations)} "
            f"after; 503s: {sum(a.status == 503 for a in load.answers)} of {len(load.answers)} answers"
        )
        failed = [a for a in load.answers if a.status not in (200, 503)]
        assert not failed, f"answers other than 200 and 503 (a lineage lost, a 500, no answer): {failed[:10]}"
        assert all(a.error == "temporarily_unavailable" for a in load.answers if a.status == 503)
        assert any(a.status == 503 and a.at > killed_at for a in load.answers), "the failover went unnoticed"
        assert slowest < SLOWEST, f"a request took {slowest:.1f} s"
        assert len(back) == CHAINS, f"lineages {set(range(CHAINS)) - set(back)} never refreshed again"
        assert recovery <= RECOVERY_BOUND, f"lineages refreshed again {recovery:.1f} s after the kill"
        assert len(load.revoked) == REVOKED, f"only {len(load.revoked)} revocations answered"
        await _every_lineage_goes_on(http, topology, lineages, load)
        await _every_revoked_token_stays_revoked(http, topology, victims)
    await _nothing_lost_or_forked(pair.node_dsn(1), lineages, load, victims)
    assert not _log_problems(topology), "\n".join(_log_problems(topology)[:10])
    for name, service in topology.services.items():
        assert service.running(), f"{name} died: the services ride through a failover"


def _back(load: Load, dead_at: float) -> dict[int, float]:
    """Per lineage, when the first refresh started after the old primary died was answered 200."""
    back: dict[int, float] = {}
    for a in load.answers:
        if a.lineage is not None and a.lineage not in back and a.status == 200 and a.started > dead_at:
            back[a.lineage] = a.at
    return back


async def _every_lineage_goes_on(http: httpx.AsyncClient, topology: Topology, lineages: list, load: Load) -> None:
    """The token each lineage last received refreshes again: no acknowledged rotation was lost."""
    for n, (reg, _, _, _) in enumerate(lineages):
        response = await _refresh(http, topology, reg, load.latest[n])
        assert response.status_code == 200, (n, response.text)
        load.latest[n] = response.json()["refresh_token"]


async def _every_revoked_token_stays_revoked(http: httpx.AsyncClient, topology: Topology, victims: list) -> None:
    """Every revocation answered 200, before, during or after the failover, holds on the new
    primary: the refresh token is refused, the access token inactive and refused by the API."""
    rs = topology.services["resource-api"].env
    for reg, tokens, _, _ in victims:
        again = await _refresh(http, topology, reg, tokens["refresh_token"])
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant", again.text
        for token in (tokens["refresh_token"], tokens["access_token"]):
            answer = await http.post(
                f"{topology.address('authz')}/api/oauth/introspect",
                data={"token": token, "client_id": rs["RS_CLIENT_ID"], "client_secret": rs["RS_CLIENT_SECRET"]},
            )
            assert answer.status_code == 200 and answer.json() == {"active": False}, answer.text
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}

        async def refused(headers: dict[str, str] = bearer) -> bool:
            return (await http.get(f"{topology.base_url}/api/v1/courses", headers=headers)).status_code == 401

        assert await _until(refused, 15), "a revoked grant's access token still works at the API"


async def _nothing_lost_or_forked(dsn: str, lineages: list, load: Load, victims: list) -> None:
    """On the promoted standby: each lineage's grant is live with exactly one unused refresh
    token, the one its client holds (no rotation lost, none forked); each victim's grant
    is revoked."""
    conn = await asyncpg.connect(dsn)
    try:
        assert not await conn.fetchval("SELECT pg_is_in_recovery()")
        of_token = """
            SELECT g.revoked_at, array_agg(r.token_hash) FILTER (WHERE r.consumed_at IS NULL) AS unused
            FROM authz_refresh_tokens t JOIN authz_grants g ON g.id = t.grant_id
            JOIN authz_refresh_tokens r ON r.grant_id = g.id
            WHERE t.token_hash = $1 GROUP BY g.id"""
        for n in range(len(lineages)):
            row = await conn.fetchrow(of_token, digest(load.latest[n]))
            assert row is not None and row["revoked_at"] is None, (n, row)
            assert row["unused"] == [digest(load.latest[n])], (n, len(row["unused"] or []))
        for _, tokens, _, _ in victims:
            row = await conn.fetchrow(of_token, digest(tokens["refresh_token"]))
            assert row is not None and row["revoked_at"] is not None, row
    finally:
        await conn.close()
