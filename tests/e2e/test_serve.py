"""The production `serve` command (granian): the client address comes from
X-Forwarded-For only when the connecting peer is in FORWARDED_ALLOW_IPS, so the per-IP
limits count real callers behind the gateway and cannot be dodged by a forged header;
SIGTERM stops the server cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..support.net import free_port
from ..support.serving import spawn, stop, tail, wait_until_answering
from .conftest import READY_TIMEOUT, STOP_TIMEOUT

CALLBACK = "http://127.0.0.1:9/callback"


@contextlib.contextmanager
def serving(
    package: str, env: dict[str, str], log_path: Path, *, probe: str = "/readyz"
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`python -m courseschool.<package> serve` on a free port, until `probe` answers 200;
    stopped with SIGTERM, as Kubernetes stops it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", f"courseschool.{package}", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = spawn(command, {**env, "LOG_FORMAT": "json", "PYTHONUNBUFFERED": "1"}, log_path)
    try:
        wait_until_answering(process, f"{base}{probe}", log_path, timeout=READY_TIMEOUT, what=package)
        yield base, process
    finally:
        stop(process, signal.SIGTERM)


@contextlib.contextmanager
def authz_serve(
    database_url: str, redis_url: str, kek: str, log_path: Path, **extra: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RATE_")}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        KEY_ENCRYPTION_KEY=kek,
        INTERNAL_TOKEN=secrets.token_urlsafe(32),
        **extra,
    )
    with serving("authz", env, log_path) as running:
        yield running


def _register(base: str, forwarded_for: str) -> int:
    response = httpx.post(
        f"{base}/api/oauth/register",
        json={"redirect_uris": [CALLBACK]},
        headers={"X-Forwarded-For": forwarded_for},
        timeout=10.0,
    )
    assert response.status_code in (201, 429), response.text
    return response.status_code


def _test_net_address() -> str:
    """An address of TEST-NET-2 (RFC 5737) that no earlier run has counted."""
    return f"198.51.100.{secrets.randbelow(254) + 1}, 10.0.0.{secrets.randbelow(254) + 1}"


def test_trusted_proxy_header_sets_the_address_the_limits_count(database_url, redis_url, kek, tmp_path) -> None:
    with authz_serve(
        database_url,
        redis_url,
        kek,
        tmp_path / "authz.log",
        FORWARDED_ALLOW_IPS="127.0.0.1",
        RATE_REGISTER_PER_IP="2/600",
    ) as (base, process):
        first = f"203.0.113.{secrets.randbelow(254) + 1}"
        assert [_register(base, first) for _ in range(3)] == [201, 201, 429]
        # Another caller behind the same proxy has a budget of its own.
        second = _test_net_address()
        assert _register(base, second) == 201
        # One JSON line per request, with the caller's request id (what the gateway sends).
        keys = httpx.get(f"{base}/api/oauth/jwks", headers={"X-Request-ID": "serve-trace-1"}, timeout=10.0)
        assert keys.status_code == 200 and keys.headers["x-request-id"] == "serve-trace-1"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_TIMEOUT) == 0, tail(tmp_path / "authz.log")
    log = (tmp_path / "authz.log").read_text()
    assert "Granian shutdown completed" in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    (line,) = [x for x in lines if x.get("request_id") == "serve-trace-1"]
    assert line["event"] == "request_handled" and line["path"] == "/api/oauth/jwks" and line["status"] == 200
    assert line["level"] == "info" and isinstance(line["ms"], float)


def test_untrusted_peer_cannot_choose_its_address_with_a_header(database_url, redis_url, kek, tmp_path) -> None:
    # The loopback peer is not a trusted proxy here: every request counts against 127.0.0.1
    # whatever X-Forwarded-For says, so fresh forged addresses do not reset the budget.
    with authz_serve(
        database_url,
        redis_url,
        kek,
        tmp_path / "authz.log",
        FORWARDED_ALLOW_IPS="192.0.2.1",
        RATE_REGISTER_PER_IP="2/600",
    ) as (base, _):
        statuses = [_register(base, _test_net_address()) for _ in range(3)]
    assert statuses[2] == 429, statuses


@pytest.mark.parametrize("package", ["authz", "resource_api"])
def test_a_service_with_tables_refuses_to_start_without_a_database(package, redis_url, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "KEY_ENCRYPTION_KEY")}
    env.update(REDIS_URL=redis_url)
    done = subprocess.run(
        [sys.executable, "-m", f"courseschool.{package}", "serve", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "DATABASE_URL: required" in done.stderr, done.stderr


def test_discovery_needs_no_database(redis_url, tmp_path) -> None:
    """Discovery has no tables: it starts with Redis alone (where it keeps the last good
    copy of each document), so the deployment gives it no database credentials."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(REDIS_URL=redis_url, AUTHZ_INTERNAL_URL="http://127.0.0.1:9", RESOURCE_INTERNAL_URL="http://127.0.0.1:9")
    log_path = tmp_path / "discovery.log"
    with serving("discovery", env, log_path, probe="/healthz") as (base, process):
        # Readiness depends on the upstreams (unreachable here) or a last good copy in the
        # shared Redis: either way an answer, never a crash for want of a database.
        ready = httpx.get(f"{base}/readyz", timeout=10.0)
        assert ready.status_code in (200, 503) and "checks" in ready.json()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_TIMEOUT) == 0, tail(log_path)
    assert "DATABASE_URL" not in tail(log_path)
