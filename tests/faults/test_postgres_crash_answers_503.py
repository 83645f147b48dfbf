"""Finding 24: a PostgreSQL crash (SIGKILL of the postmaster, as the OOM killer does)
under load at the token endpoint is answered like every other database outage: fast
JSON 503s, never a 500 nor a logged traceback (a connection broken mid-operation raised
asyncpg's InternalClientError "cannot switch to state ..." from the client lookup), and
the service resumes by itself after the restart (crash recovery), with no half-written
grant. In the production topology (tests/support/split.py) over a PostgreSQL of the test's own."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator

import httpx
import pytest

from ..support.deployment import NGINX_MISSING, find_tool
from ..support.split import Topology, running_topology
from . import test_faults
from .test_faults import _all_ready, _no_half_written_grants, _probes, _refresh, _tokens, _until

pytestmark = pytest.mark.skipif(find_tool("nginx") is None, reason=NGINX_MISSING)

servers = test_faults.servers  # the fault suite's own PostgreSQL and Redis, a pair for this module

OUTAGE = 1.0  # seconds Postgres stays down
LOAD_TASKS = 16  # concurrent callers at the token endpoint besides the refresh chains
CRASHES = 8


@pytest.fixture(scope="module")
def topology(servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    pg, redis, kek = servers
    nginx = find_tool("nginx")
    assert nginx is not None
    load = {"authz": {"RATE_TOKEN_PER_IP": "1000000/60", "RATE_TOKEN_PER_CLIENT": "1000000/60"}}  # the load is ours
    folder = tmp_path_factory.mktemp("split-crash")
    with running_topology(pg.dsn, redis.url, kek, folder, nginx, overrides=load) as running:
        yield running


def _log_problems(topology: Topology) -> list[str]:
    """Log lines of any service that show a crash: a traceback, or a request answered 500."""
    problems = []
    for name, service in topology.services.items():
        for line in service.log_path.read_text(errors="replace").splitlines():
            if "Traceback" in line or "request_crashed" in line:
                problems.append(f"{name}: {line[:600]}")
            elif line.startswith("{"):
                record = json.loads(line)
                if record.get("event") == "request_handled" and record.get("status", 0) >= 500:
                    if record["status"] != 503:
                        problems.append(f"{name}: {line[:600]}")
    return problems


async def test_a_postgres_crash_under_token_load_gives_503s_not_500s(servers, topology: Topology) -> None:
    pg, _, _ = servers
    base = topology.base_url
    answers: list[tuple[int, str]] = []  # (status, error code) of every token request
    stop = asyncio.Event()
    async with httpx.AsyncClient(timeout=10) as http:
        chains = [await _tokens(http, topology) for _ in range(2)]

        chain_statuses: list[list[int]] = []

        async def refresh_chain(reg: dict, tokens: dict) -> None:
            latest = tokens["refresh_token"]
            chain_statuses.append(statuses := [])
            while not stop.is_set():
                response = await _refresh(http, topology, reg, latest)
                answers.append((response.status_code, response.json().get("error", "")))
                statuses.append(response.status_code)
                if response.status_code == 200:
                    latest = response.json()["refresh_token"]
                await asyncio.sleep(0.02)

        async def client_lookups(client_id: str) -> None:
            # A registered client and an unknown token: the client is looked up every time.
            while not stop.is_set():
                response = await http.post(
                    f"{base}/api/oauth/token",
                    data={
                        "grant_type": "refresh_token",
                        "refresh_token": secrets.token_urlsafe(32),
                        "client_id": client_id,
                    },
                )
                answers.append((response.status_code, response.json().get("error", "")))

        tasks = [asyncio.create_task(refresh_chain(reg, tokens)) for reg, tokens, _, _ in chains]
        tasks += [asyncio.create_task(client_lookups(chains[i % 2][0]["client_id"])) for i in range(LOAD_TASKS)]
        during: list[tuple[int, str]] = []
        try:
            await asyncio.sleep(1.0)
            for _ in range(CRASHES):  # the broken connection is a race: give it several chances
                await asyncio.to_thread(pg.crash)
                crashed_at = len(answers)
                await asyncio.sleep(OUTAGE)
                during += answers[crashed_at:]
                await asyncio.to_thread(pg.start)
                assert await _until(lambda: _all_ready(http, topology), 30), await _probes(http, topology)
                await asyncio.sleep(1.0)  # the load goes on after the recovery
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            assert task.exception() is None, task.exception()

        statuses = {status for status, _ in answers}
        assert statuses <= {200, 400, 503}, sorted(set(answers))
        assert (503, "temporarily_unavailable") in during, sorted(set(during))
        assert all(error == "temporarily_unavailable" for status, error in answers if status == 503)
        # Resumed by itself: every chain refreshes again, the lookups answer as before the crash.
        assert [statuses[-1] for statuses in chain_statuses] == [200, 200], chain_statuses
        assert answers[-1] in ((200, ""), (400, "invalid_grant")), answers[-10:]
    assert not _log_problems(topology), "\n".join(_log_problems(topology)[:10])
    await _no_half_written_grants(pg.dsn)
    for name, service in topology.services.items():
        assert service.running(), f"{name} died: the services resume by themselves"
