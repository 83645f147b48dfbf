"""Finding 13: /metrics, /healthz and /readyz of the all-in-one are not public.

- `platform/asgi.py`, the production all-in-one, run as its docstring says (granian):
  all three answer only `Authorization: Bearer INTERNAL_TOKEN`, 404 for anyone else;
- `run`, the development default on loopback: /healthz and /readyz stay open (the
  developer's and this suite's probe), /metrics needs the token."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..support.net import free_port
from ..support.serving import spawn, stop, wait_until_answering
from .conftest import READY_TIMEOUT, Platform

PROBES = ("/healthz", "/readyz", "/metrics")


@contextlib.contextmanager
def asgi_all_in_one(env: dict[str, str], log_path: Path, token: str) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [
        str(Path(sys.executable).with_name("granian")),
        *("--interface", "asgi", "--http", "1", "--http1-header-read-timeout", "10000"),
        *("--host", "127.0.0.1", "--port", str(port)),
        "courseschool.platform.asgi:app",
    ]
    process = spawn(command, env, log_path)
    try:
        wait_until_answering(
            process,
            f"{base}/readyz",
            log_path,
            timeout=READY_TIMEOUT,
            what="the ASGI app",
            headers={"Authorization": f"Bearer {token}"},
        )
        yield base
    finally:
        stop(process, signal.SIGTERM)


def _refused(response: httpx.Response) -> bool:
    return response.status_code == 404 and response.json()["error"] == "not_found"


def test_the_production_all_in_one_answers_probes_only_to_the_internal_token(
    database_url, redis_url, kek, tmp_path
) -> None:
    token = secrets.token_urlsafe(32)
    env = {k: v for k, v in os.environ.items() if k not in ("FORWARDED_ALLOW_IPS", "DEV")}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        KEY_ENCRYPTION_KEY=kek,
        INTERNAL_TOKEN=token,
        LOG_FORMAT="json",
        PYTHONUNBUFFERED="1",
    )
    with asgi_all_in_one(env, tmp_path / "asgi.log", token) as base:
        for path in PROBES:
            assert _refused(httpx.get(f"{base}{path}", timeout=10.0)), path
            wrong = httpx.get(f"{base}{path}", headers={"Authorization": "Bearer not-the-token"}, timeout=10.0)
            assert _refused(wrong), path
            right = httpx.get(f"{base}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=10.0)
            assert right.status_code == 200, (path, right.text[:200])
        # The public endpoints are served as ever.
        meta = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=10.0)
        assert meta.status_code == 200


def test_run_keeps_health_open_on_loopback_and_metrics_closed(platform: Platform) -> None:
    base = platform.address
    assert httpx.get(f"{base}/healthz", timeout=10.0).json() == {"status": "ok"}
    assert httpx.get(f"{base}/readyz", timeout=10.0).status_code == 200
    assert _refused(httpx.get(f"{base}/metrics", timeout=10.0))
    scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {platform.internal_token}"}, timeout=10.0)
    assert scraped.status_code == 200 and "# TYPE http_requests_total counter" in scraped.text


@pytest.mark.parametrize("path", ["/METRICS", "/metrics/", "/metrics."])
def test_run_refuses_metrics_in_other_spellings(platform: Platform, path: str) -> None:
    assert httpx.get(f"{platform.address}{path}", timeout=10.0).status_code == 404
