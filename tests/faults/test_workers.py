"""Servers with two worker processes, under load, as production runs them:

- a worker that dies (SIGKILL, as the OOM killer sends it) is replaced and the server
  keeps answering, both under `serve` (what the image, compose and the k8s manifests
  run) and under the granian command line that platform/asgi.py documents;
- every line the workers write to their shared stderr is one whole JSON record.

Over the session's Postgres and Redis; every load loop is bounded in count and time."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx
import psutil
import pytest
import redis.asyncio as aioredis

from ..support.deployment import documented_granian_commands
from ..support.net import free_port
from ..support.serving import spawn, stop, wait_until_answering
from .servers import OwnRedis, server_folder

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
CALLBACK = "http://127.0.0.1:9/callback"


@dataclass
class Server:
    base: str
    process: subprocess.Popen[bytes]
    log_path: Path
    headers: dict[str, str]

    def workers(self) -> list[psutil.Process]:
        """granian's worker processes: the children that serve (not multiprocessing's helpers)."""
        workers = []
        for child in psutil.Process(self.process.pid).children():
            try:
                if "resource_tracker" not in " ".join(child.cmdline()):
                    workers.append(child)
            except (psutil.ZombieProcess, psutil.NoSuchProcess):
                continue  # a killed worker not reaped yet is no worker
        return workers

    def tail(self, limit: int = 6000) -> str:
        return self.log_path.read_text(errors="replace")[-limit:]


def _environment(database_url: str, redis_url: str, kek: str, token: str, base: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RATE_", "GRANIAN_"))}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        KEY_ENCRYPTION_KEY=kek,
        INTERNAL_TOKEN=token,
        BASE_URL=base,
        RS_CLIENT_ID="resource-api",
        RS_CLIENT_SECRET=secrets.token_urlsafe(32),
        LOG_FORMAT="json",
        PYTHONUNBUFFERED="1",  # as the image runs: every write goes straight to the shared stderr
    )
    return env


@contextlib.contextmanager
def _running(command: list[str], env: dict[str, str], base: str, log_path: Path, headers: dict[str, str]):
    process = spawn(command, env, log_path, new_session=True)
    server = Server(base=base, process=process, log_path=log_path, headers=headers)
    try:
        # Up means answering with both workers started.
        wait_until_answering(
            process,
            f"{base}/healthz",
            log_path,
            timeout=READY_TIMEOUT,
            what="the server (two workers)",
            headers=headers,
            also=lambda: len(server.workers()) == 2,
        )
        yield server
    finally:
        stop(process, signal.SIGTERM, timeout=STOP_TIMEOUT, group=True)


@pytest.fixture(scope="module")
def own_redis() -> Iterator[OwnRedis]:
    folder = server_folder()
    server = OwnRedis(folder)
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def authz_serve(
    database_url: str, own_redis: OwnRedis, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`python -m courseschool.authz serve --workers 2`, as the image runs it, over a Redis
    of the module's own (the log test makes it refuse writes)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    token = secrets.token_urlsafe(32)
    command = [sys.executable, "-m", "courseschool.authz", "serve", "--host", "127.0.0.1", "--port", str(port)]
    log_path = tmp_path_factory.mktemp("serve") / "authz.log"
    env = _environment(database_url, own_redis.url, kek, token, base)
    # Generous limits: the load comes from one address (the limits have tests of their own).
    env.update(RATE_REGISTER_PER_IP="1000/60", RATE_AUTHORIZE_PER_IP="1000000/60")
    with _running([*command, "--workers", "2"], env, base, log_path, {"Authorization": f"Bearer {token}"}) as server:
        yield server


async def _load(
    server: Server,
    requests: int,
    paths: list[str],
    *,
    tasks: int = 12,
    seconds: float = 60.0,
    until: asyncio.Event | None = None,
) -> list[int | None]:
    """Up to `requests` GETs of `paths` in turn from `tasks` callers at once, until `until`
    is set (bounded in time too); the status of each (None: no answer, as when its
    worker was killed)."""
    statuses: list[int | None] = []
    deadline = time.monotonic() + seconds
    left = iter(range(requests))

    async def caller(http: httpx.AsyncClient) -> None:
        for n in left:
            if time.monotonic() > deadline or (until is not None and until.is_set()):
                return
            try:
                statuses.append((await http.get(paths[n % len(paths)])).status_code)
            except httpx.HTTPError:
                statuses.append(None)

    async with httpx.AsyncClient(base_url=server.base, timeout=10.0) as http:
        await asyncio.gather(*(caller(http) for _ in range(tasks)))
    return statuses


def _respawn_started(server: Server) -> bool:
    """granian's log says a worker was started after it said it respawns one."""
    log = server.log_path.read_text(errors="replace")
    respawning = log.rfind("Respawning worker")
    return respawning >= 0 and "Started worker" in log[respawning:]


async def _a_worker_killed_under_load_is_replaced(server: Server) -> None:
    before = server.workers()
    assert len(before) == 2, server.tail()
    # The load lasts until the replacement is seen: the kill and the respawn both
    # happen while requests keep coming.
    replaced = asyncio.Event()
    load = asyncio.create_task(_load(server, 1_000_000, ["/api/oauth/jwks"], seconds=60.0, until=replaced))
    await asyncio.sleep(1.0)
    victim = before[0]
    victim.send_signal(signal.SIGKILL)
    try:
        # Replaced: two workers again, the killed one not among them, and the new one
        # started (its app loaded: granian says so). A stop asked for while the new
        # worker still starts waits for granian's own kill timeout (granian 2.8).
        deadline = time.monotonic() + 30
        while True:
            workers = server.workers()
            if len(workers) == 2 and victim.pid not in {w.pid for w in workers} and _respawn_started(server):
                break
            assert time.monotonic() < deadline, f"the killed worker was not replaced: {workers}\n{server.tail()}"
            assert server.process.poll() is None, f"the server stopped:\n{server.tail()}"
            await asyncio.sleep(0.2)
    finally:
        replaced.set()
    statuses = await load
    assert server.process.poll() is None, f"the server stopped when a worker died:\n{server.tail()}"
    assert 200 in statuses, statuses[:50]
    # Served after: every request answered, by both workers' replacements alike.
    async with httpx.AsyncClient(base_url=server.base, timeout=10.0) as http:
        after = [(await http.get("/healthz", headers=server.headers)).status_code for _ in range(50)]
    assert after == [200] * 50, after


async def test_log_records_are_whole_json_lines_with_two_workers_under_load(
    authz_serve: Server, own_redis: OwnRedis
) -> None:
    """Both workers write records besides the request line at the same time: sign-ins
    started while Redis refuses writes (out of memory) log why they were refused."""
    async with httpx.AsyncClient(base_url=authz_serve.base, timeout=10.0) as http:
        reg = await http.post("/api/oauth/register", json={"redirect_uris": [CALLBACK]})
    assert reg.status_code == 201, reg.text
    authorize = "/oauth/authorize?" + urlencode(
        {
            "response_type": "code",
            "client_id": reg.json()["client_id"],
            "redirect_uri": CALLBACK,
            "scope": "openid",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
        }
    )
    admin = aioredis.from_url(own_redis.url)
    try:
        await admin.config_set("maxmemory-policy", "noeviction")
        await admin.config_set("maxmemory", "1")
        # A count of requests, not a time: on a busy machine 60 s held 650 of them, and
        # the test failed for it (the time bound is only a guard against a hang).
        statuses = await _load(authz_serve, 1200, ["/api/oauth/jwks", authorize], seconds=600)
    finally:
        await admin.config_set("maxmemory", "0")
        await admin.aclose()
    assert len(statuses) == 1200 and set(statuses) == {200, 503}, (len(statuses), set(statuses))
    lines = authz_serve.log_path.read_text().splitlines()
    assert len(lines) > len(statuses), "each request logs its line, refused sign-ins a record more"
    broken = []
    for line in lines:
        try:
            record = json.loads(line)
            assert isinstance(record, dict) and "event" in record
        except (ValueError, AssertionError):
            broken.append(line[:300])
    assert not broken, f"{len(broken)} of {len(lines)} lines are not one JSON record:\n" + "\n".join(broken[:5])


async def test_a_killed_worker_is_replaced_under_serve(authz_serve: Server) -> None:
    await _a_worker_killed_under_load_is_replaced(authz_serve)


async def test_a_killed_worker_is_replaced_under_the_documented_granian_command(
    database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    (command,) = documented_granian_commands()
    assert command[0] == "granian" and command[-1] == "courseschool.platform.asgi:app", command
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    token = secrets.token_urlsafe(32)
    granian = str(Path(sys.executable).parent / "granian")
    command = [granian, *command[1:-1], "--workers", "2", "--host", "127.0.0.1", "--port", str(port), command[-1]]
    env = _environment(database_url, redis_url, kek, token, base)
    with _running(command, env, base, tmp_path / "asgi.log", {"Authorization": f"Bearer {token}"}) as server:
        await _a_worker_killed_under_load_is_replaced(server)
