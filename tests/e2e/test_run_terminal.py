"""What `make run` tells a developer: how to read its metrics (the command it prints
works), the port it was given (PORT, as --port) in every address it hands out, no
RuntimeDirWarning where XDG_RUNTIME_DIR is unset; `run --help` describes every option
and setting; `platform admin` prints its result only, its log kept in the data folder."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest

from ..support.net import free_port
from ..support.serving import PLATFORM_ENV, platform_command, spawn, stop, tail
from .conftest import Platform
from .test_stop_signals_stop_embedded_servers import _data_folder, _wait_ready


@pytest.fixture
def data_dir() -> Iterator[Path]:
    with _data_folder("cs-run-terminal-") as folder:
        yield folder


def test_run_prints_how_to_read_its_metrics_and_follows_port_without_warnings(data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV and not k.startswith("RATE_")}
    env.pop("XDG_RUNTIME_DIR", None)  # as in a container, `su`, cron or CI
    env.update(DATA_DIR=str(data_dir), PORT=str(port), PYTHONUNBUFFERED="1")
    log_path = tmp_path / "run.log"
    process = spawn(platform_command(), env, log_path, new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, base, log_path)
        output = tail(log_path, 50_000)
        assert f"Course School is running at {base}\n" in output  # PORT moved the public origin too
        issuer = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=10).json()["issuer"]
        assert issuer == base
        command = re.search(r'Metrics: curl -H "Authorization: Bearer ([A-Za-z0-9_-]{32,})" (\S+)', output)
        assert command, output
        token, url = command.groups()
        assert url == f"{base}/metrics"
        metrics = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert metrics.status_code == 200 and "# TYPE http_requests_total counter" in metrics.text
        assert httpx.get(url, timeout=10).status_code == 404  # still closed without it

        admin = subprocess.run(
            [sys.executable, "-m", "courseschool.platform", "admin", "schools", "create", "--slug", "t", "--name", "T"],
            env={k: v for k, v in env.items() if k != "PORT"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert admin.returncode == 0 and admin.stderr == "", admin.stderr
        assert "slug: t" in admin.stdout and "{" not in admin.stdout  # the result, no log line
        records = (data_dir / "admin-cli.log").read_text().splitlines()
        assert [msgspec.json.decode(r)["event"] for r in records] == ["school_created"]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(30)
        stop(process, signal.SIGKILL)
    output = tail(log_path, 50_000)
    assert "RuntimeDirWarning" not in output and "XDG_RUNTIME_DIR" not in output, output


def test_a_token_the_operator_set_is_not_printed(platform: Platform) -> None:
    output = platform.output()
    assert f'Metrics: curl -H "Authorization: Bearer $INTERNAL_TOKEN" {platform.address}/metrics' in output
    assert platform.internal_token not in output


def test_run_help_describes_every_option_and_setting() -> None:
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV}
    shown = subprocess.run(
        [sys.executable, "-m", "courseschool.platform", "run", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0 and shown.stderr == ""
    options = shown.stdout.split("options:\n", 1)[1].split("\n\n", 1)[0]
    described = re.findall(r"^  (-\S+(?:, -\S+)*(?: [A-Z_]+)?) +(\S.*)$", options, flags=re.M)
    assert {name.split()[0].rstrip(",") for name, _ in described} == {"-h", "--port"}, options
    assert "the port to listen on" in options and "BASE_URL follows it" in options
    for setting in ("PORT", "HOST", "BASE_URL", "DATA_DIR", "DATABASE_URL", "REDIS_URL", "KEY_ENCRYPTION_KEY"):
        assert re.search(rf"^  {setting} ", shown.stdout, flags=re.M), setting
    for setting in (
        "INTERNAL_TOKEN",
        "DEMO_EMAIL",
        "DEMO_PASSWORD",
        "LOG_LEVEL",
        "RATE_",
        "FORWARDED_ALLOW_IPS",
        "SMTP_URL",
        "EVENTS_WEBHOOK_URL",
        "EVENTS_WEBHOOK_SECRET",
        "EVENTS_WEBHOOK_MAX_ATTEMPTS",
    ):
        assert setting in shown.stdout, setting
