"""Faults injected into the production topology (tests/support/split.py: authz, the resource API
and discovery as three processes started with their production commands, behind the
nginx gateway of deploy/nginx/nginx.conf), over servers the tests start themselves
(their own PostgreSQL and Redis, started like the embedded default, never the machine's).

The platform answers fast JSON 503s while Postgres is down and resumes by itself, each
service's /readyz says what it depends on while /healthz stays up; authz starts unready
and becomes ready; the API keeps serving without Redis; a used code or a revoked token
never works again, in any process, nor is a grant left half written; each service stops
cleanly on SIGTERM, finishing the request in flight. Every loop is bounded; on failure
the tail of every process's log is shown (tests/faults/conftest.py)."""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from urllib.parse import urlencode

import asyncpg
import httpx
import pytest

from courseschool.common.cli import SHUTDOWN_GRACE
from courseschool.common.jose import new_kek

from ..support.deployment import NGINX_MISSING, find_tool
from ..support.net import free_port
from ..support.oauth_client import Human, pkce_pair, query_of
from ..support.split import STOP_GRACE, Service, Topology, running_topology
from .servers import OwnPostgres, OwnRedis, server_folder

pytestmark = pytest.mark.skipif(find_tool("nginx") is None, reason=NGINX_MISSING)

CALLBACK = "http://127.0.0.1:9/callback"
SERVICE_NAMES = ("authz", "resource-api", "discovery")
# The gateway's own answer when an upstream cannot be reached (nginx.conf, @unavailable).
GATEWAY_UNAVAILABLE = "the service is unavailable; try again shortly"


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[OwnPostgres, OwnRedis, str]]:
    folder = server_folder()
    pg = OwnPostgres(folder / "pg")
    try:
        redis = OwnRedis(folder)
        try:
            yield pg, redis, new_kek()
        finally:
            redis.close()
    finally:
        pg.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def topology(servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    pg, redis, kek = servers
    nginx = find_tool("nginx")
    assert nginx is not None
    with running_topology(pg.dsn, redis.url, kek, tmp_path_factory.mktemp("split"), nginx) as running:
        yield running


# -- helpers ------------------------------------------------------------------------------


async def _code(http: httpx.AsyncClient, topology: Topology, reg: dict) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    url = f"{topology.base_url}/oauth/authorize?" + urlencode(
        {
            "response_type": "code",
            "client_id": reg["client_id"],
            "redirect_uri": CALLBACK,
            "scope": "openid courses:read",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    async with Human(topology.base_url) as human:
        location = await human.authorize(url, email=topology.email, password=topology.password)
    return query_of(location)["code"], verifier


async def _tokens(http: httpx.AsyncClient, topology: Topology) -> tuple[dict, dict, str, str]:
    reg = (await http.post(f"{topology.base_url}/api/oauth/register", json={"redirect_uris": [CALLBACK]})).json()
    code, verifier = await _code(http, topology, reg)
    response = await http.post(
        f"{topology.base_url}/api/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "client_id": reg["client_id"],
            "code_verifier": verifier,
        },
    )
    assert response.status_code == 200, response.text
    return reg, response.json(), code, verifier


async def _refresh(http: httpx.AsyncClient, topology: Topology, reg: dict, token: str) -> httpx.Response:
    return await http.post(
        f"{topology.base_url}/api/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": token,
            "client_id": reg["client_id"],
        },
    )


async def _until(check: Callable[[], Awaitable[bool]], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.2)
    return False


async def _status(http: httpx.AsyncClient, url: str, **kwargs) -> int | None:
    try:
        return (await http.get(url, **kwargs)).status_code
    except httpx.HTTPError:
        return None


async def _probes(http: httpx.AsyncClient, topology: Topology) -> dict[str, tuple[int, dict, int]]:
    """Per service, reached directly on its port as the kubelet does: the /readyz status,
    its checks, and the /healthz status."""
    found = {}
    for name in SERVICE_NAMES:
        address = topology.address(name)
        ready = await http.get(f"{address}/readyz")
        assert ready.headers["content-type"].startswith("application/json"), (name, ready.text)
        found[name] = (ready.status_code, ready.json()["checks"], (await http.get(f"{address}/healthz")).status_code)
    return found


def _ready_and_alive(probe: tuple[int, dict, int]) -> bool:
    ready, checks, alive = probe
    return ready == 200 and alive == 200 and all(v == "ok" for v in checks.values())


async def _all_ready(http: httpx.AsyncClient, topology: Topology) -> bool:
    for name in SERVICE_NAMES:
        if await _status(http, f"{topology.address(name)}/readyz") != 200:
            return False
    return True


async def _no_half_written_grants(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        orphan_codes = await conn.fetchval("""
            SELECT count(*) FROM authz_codes c JOIN authz_grants g ON g.id = c.grant_id
            JOIN authz_clients k ON k.client_id = g.client_id
            WHERE c.consumed_at IS NOT NULL AND 'refresh_token' = ANY (k.grant_types)
              AND NOT EXISTS (SELECT 1 FROM authz_refresh_tokens r WHERE r.grant_id = c.grant_id)""")
        orphan_rotations = await conn.fetchval("""
            SELECT count(*) FROM authz_refresh_tokens r WHERE r.replaced_by IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM authz_refresh_tokens n WHERE n.token_hash = r.replaced_by)""")
    finally:
        await conn.close()
    assert orphan_codes == 0 and orphan_rotations == 0


def _pg_stopped(pg: OwnPostgres) -> bool:
    return not (pg.folder / "postmaster.pid").exists()


# -- Postgres ---------------------------------------------------------------------------


def _only_down(probes: dict, *, down: str, up: str) -> None:
    """authz and the resource API are alive but not ready, naming `down` and not `up`;
    discovery, whose readiness depends on neither, stays ready."""
    for name in ("authz", "resource-api"):
        ready, checks, alive = probes[name]
        assert ready == 503 and checks[down].startswith("unavailable") and checks[up] == "ok", (name, probes[name])
        assert alive == 200, name
    assert _ready_and_alive(probes["discovery"]), probes["discovery"]


async def test_postgres_outage_gives_fast_503s_and_service_resumes(servers, topology: Topology) -> None:
    pg, _, _ = servers
    base = topology.base_url
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, _, _ = await _tokens(http, topology)
        latest = {"refresh": tokens["refresh_token"]}
        statuses: list[int] = []

        async def traffic() -> None:
            for _ in range(60):  # bounded, and under the per-client rate limit
                response = await _refresh(http, topology, reg, latest["refresh"])
                statuses.append(response.status_code)
                if response.status_code == 200:
                    latest["refresh"] = response.json()["refresh_token"]
                await asyncio.sleep(0.1)

        running = asyncio.create_task(traffic())
        await asyncio.sleep(0.3)
        pg.stop()
        try:
            started = time.monotonic()
            refused = await _refresh(http, topology, reg, latest["refresh"])
            assert refused.status_code == 503 and refused.json()["error"] == "temporarily_unavailable"
            assert time.monotonic() - started < 2.0
            # The 503s are the services' own, passed through by the gateway (not its
            # "upstream unreachable" answer): the processes are up, Postgres is not.
            assert refused.json()["error_description"] != GATEWAY_UNAVAILABLE
            catalogue = await http.get(f"{base}/api/v1/courses?school=demo")
            assert catalogue.status_code == 503 and catalogue.headers["content-type"] == "application/json"
            assert catalogue.json()["error_description"] != GATEWAY_UNAVAILABLE
            # Each service on its own port: the two that use Postgres say not ready and
            # name it; discovery, which does not, stays ready; every process is alive.
            _only_down(await _probes(http, topology), down="postgres", up="redis")
            # ... and keeps serving the metadata through the gateway; the JWKS is served
            # from the keys authz holds in memory.
            meta = await http.get(f"{base}/.well-known/oauth-authorization-server")
            assert meta.status_code == 200 and meta.json()["issuer"] == base
            assert (await http.get(f"{base}/api/oauth/jwks")).status_code == 200
            await asyncio.sleep(0.5)
        finally:
            pg.start()
        assert await _until(lambda: _all_ready(http, topology), 15), await _probes(http, topology)
        await asyncio.wait_for(running, 30)
        assert 503 in statuses and all(s in (200, 503) for s in statuses), sorted(set(statuses))
        assert statuses[-1] == 200
        assert (await _refresh(http, topology, reg, latest["refresh"])).status_code == 200
        assert (await http.get(f"{base}/api/v1/courses?school=demo")).status_code == 200
    await _no_half_written_grants(pg.dsn)
    for name, service in topology.services.items():
        assert service.running(), f"{name} was restarted or died: the services resume by themselves"


async def test_authz_started_while_postgres_is_down_becomes_ready_by_itself(
    servers, topology: Topology, tmp_path
) -> None:
    """A second authz replica, with the first one's production environment, started
    while Postgres is down; stopped with SIGTERM at the end."""
    pg, _, _ = servers
    authz = topology.services["authz"]
    replica = Service(
        name="authz-replica",
        package="authz",
        port=free_port(),
        env=authz.env,
        log_path=tmp_path / "authz-replica.log",
        cwd=tmp_path,
    )
    base = replica.address
    pg.stop()
    replica.start()
    try:
        async with httpx.AsyncClient(timeout=5) as http:

            async def alive() -> bool:
                return await _status(http, f"{base}/healthz") == 200

            assert await _until(alive, 20), replica.tail()
            ready = await http.get(f"{base}/readyz")
            assert ready.status_code == 503 and ready.json()["checks"]["postgres"].startswith("unavailable")
            keys = await http.get(f"{base}/api/oauth/jwks")
            assert keys.status_code == 503 and keys.json()["error"] == "temporarily_unavailable"
            pg.start()

            async def ready_now() -> bool:
                return await _status(http, f"{base}/readyz") == 200

            assert await _until(ready_now, 15), replica.tail()

            async def keys_loaded() -> bool:
                return await _status(http, f"{base}/api/oauth/jwks") == 200

            assert await _until(keys_loaded, 10), replica.tail()
            # The replica signs with the keys the first one publishes (one key set).
            own = (await http.get(f"{base}/api/oauth/jwks")).json()
            published = (await http.get(f"{topology.base_url}/api/oauth/jwks")).json()
            assert {k["kid"] for k in own["keys"]} == {k["kid"] for k in published["keys"]}
        assert replica.running(), replica.tail()
        started = time.monotonic()
        code = replica.stop()
        assert code == 0, f"exit {code} after SIGTERM:\n{replica.tail()}"
        assert time.monotonic() - started < SHUTDOWN_GRACE
    finally:
        if _pg_stopped(pg):
            pg.start()
        replica.stop()


# -- Redis ----------------------------------------------------------------------------


async def test_without_redis_the_api_keeps_serving_and_nothing_revoked_comes_back(servers, topology: Topology) -> None:
    _, redis, _ = servers
    base = topology.base_url
    resource = topology.address("resource-api")
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, code, verifier = await _tokens(http, topology)
        reg2, revoked_tokens, _, _ = await _tokens(http, topology)
        revoked = await http.post(
            f"{base}/api/oauth/revoke", data={"token": revoked_tokens["refresh_token"], "client_id": reg2["client_id"]}
        )
        assert revoked.status_code == 200
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 200
        redis.stop()
        try:
            started = time.monotonic()
            assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 200
            assert (await http.get(f"{resource}/api/v1/courses", headers=bearer)).status_code == 200
            assert (await http.get(f"{base}/api/v1/courses?school=demo")).status_code == 200
            assert (await http.get(f"{base}/.well-known/oauth-authorization-server")).status_code == 200
            reused = await http.post(
                f"{base}/api/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": CALLBACK,
                    "client_id": reg["client_id"],
                    "code_verifier": verifier,
                },
            )
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
            # Probes: the two services whose readiness needs Redis say so; discovery's does not.
            _only_down(await _probes(http, topology), down="redis", up="postgres")
            assert time.monotonic() - started < 10
        finally:
            redis.start()
        async with httpx.AsyncClient(timeout=10) as http2:
            # The code reuse above ended the first grant in authz's process, while Redis
            # was down; the resource API, another process, learns it once Redis is back
            # (and its revocation feed reconnects and reloads), and refuses the token
            # from then on, through the gateway and directly.
            async def refused() -> bool:
                return await _status(http2, f"{base}/api/v1/courses", headers=bearer) == 401

            assert await _until(refused, 15), "the revoked grant's token still works after Redis came back"
            for _ in range(5):
                assert (await http2.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 401
                assert (await http2.get(f"{resource}/api/v1/courses", headers=bearer)).status_code == 401
            # The refresh token revoked before the outage stays revoked.
            again = await _refresh(http2, topology, reg2, revoked_tokens["refresh_token"])
            assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
            assert await _until(lambda: _all_ready(http2, topology), 15), await _probes(http2, topology)


async def test_paused_redis_keeps_every_call_time_bounded(servers, topology: Topology) -> None:
    _, redis, _ = servers
    base = topology.base_url
    async with httpx.AsyncClient(timeout=15) as http:
        _, tokens, _, _ = await _tokens(http, topology)
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        calls = [
            (f"{base}/api/v1/courses", bearer),
            (f"{base}/oauth/authorize?client_id=x", {}),
            *((f"{topology.address(name)}/readyz", {}) for name in SERVICE_NAMES),
        ]
        redis.pause()
        try:
            for url, headers in calls:
                started = time.monotonic()
                response = await http.get(url, headers=headers)
                assert time.monotonic() - started < 8, url
                assert response.status_code < 500 or response.headers["content-type"].startswith("application/json")
        finally:
            redis.resume()
        assert await _until(lambda: _all_ready(http, topology), 15), await _probes(http, topology)


async def test_flushed_redis_revives_no_used_code_and_no_revoked_token(servers, topology: Topology) -> None:
    _, redis, _ = servers
    base = topology.base_url
    resource = topology.address("resource-api")
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, code, verifier = await _tokens(http, topology)
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        revoked = await http.post(
            f"{base}/api/oauth/revoke", data={"token": tokens["access_token"], "client_id": reg["client_id"]}
        )
        assert revoked.status_code == 200

        async def refused() -> bool:
            return await _status(http, f"{base}/api/v1/courses", headers=bearer) == 401

        assert await _until(refused, 5), "the revocation did not reach the resource API"
        import redis.asyncio as aioredis

        client = aioredis.from_url(redis.url)
        try:
            await client.flushall()
            await client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # the feed reconnects and reloads
        finally:
            await client.aclose()
        deadline = time.monotonic() + 2.0  # across the reconnect: refused every time
        while time.monotonic() < deadline:
            assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 401
            assert (await http.get(f"{resource}/api/v1/courses", headers=bearer)).status_code == 401
            await asyncio.sleep(0.1)
        reused = await http.post(
            f"{base}/api/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": CALLBACK,
                "client_id": reg["client_id"],
                "code_verifier": verifier,
            },
        )
        assert reused.status_code == 400


# -- stopping (last: it stops the topology's services) -----------------------------------


async def test_sigterm_stops_each_service_cleanly_finishing_the_request_in_flight(servers, topology: Topology) -> None:
    """SIGTERM, as Kubernetes and compose send it: each service finishes what it is
    answering, exits 0 within the grace, and the gateway then answers its own JSON 503."""
    _, redis, _ = servers
    base = topology.base_url
    async with httpx.AsyncClient(timeout=15) as http:
        # A request that takes a while: with Redis paused, the resource API's readiness
        # waits out its Redis timeout (2 s) before answering.
        redis.pause()
        try:
            in_flight = asyncio.create_task(http.get(f"{topology.address('resource-api')}/readyz"))
            await asyncio.sleep(0.5)
            assert not in_flight.done()
            started = time.monotonic()
            for service in topology.services.values():
                assert service.running(), service.name
                service.process.send_signal(signal.SIGTERM)
            answered = await asyncio.wait_for(in_flight, 10)
        finally:
            redis.resume()
        assert answered.status_code == 503 and answered.json()["checks"]["redis"].startswith("unavailable")
        codes = {name: await asyncio.to_thread(service.wait, STOP_GRACE) for name, service in topology.services.items()}
        elapsed = time.monotonic() - started
        assert codes == {name: 0 for name in SERVICE_NAMES}, codes
        assert elapsed < SHUTDOWN_GRACE, f"{elapsed:.1f} s"
        for name, service in topology.services.items():
            assert "Granian shutdown completed" in service.tail(2000), name
        for path in ("/api/oauth/jwks", "/api/v1/courses?school=demo", "/.well-known/oauth-authorization-server"):
            response = await http.get(f"{base}{path}")
            assert response.status_code == 503 and response.headers["retry-after"] == "1", path
            assert response.json() == {"error": "temporarily_unavailable", "error_description": GATEWAY_UNAVAILABLE}
