"""`python -m courseschool.platform admin` administers a running `run` (embedded
PostgreSQL and Redis) with no settings at all, as the README shows: the data folder
says where the servers listen while it runs, and nothing once it has stopped. `run`
prints its development-sized limits."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from ..support.serving import PLATFORM_ENV, tail
from .test_stop_signals_stop_embedded_servers import _data_folder, _embedded, _platform, _stopped, _wait_ready


@pytest.fixture
def data_dir() -> Iterator[Path]:
    with _data_folder("cs-platform-admin-") as folder:
        yield folder


def _admin(folder: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV}
    env.update(DATA_DIR=str(folder))
    return subprocess.run(
        [sys.executable, "-m", "courseschool.platform", "admin", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_admin_works_against_a_running_run_and_says_so_when_none_runs(data_dir: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "platform.log"
    with _platform(data_dir, log_path) as (process, base):
        _wait_ready(process, base, log_path)
        running = data_dir / "running.json"
        assert stat.S_IMODE(running.stat().st_mode) == 0o600
        assert "Development limits" in tail(log_path) and "RATE_TOKEN_PER_IP 3000/60" in tail(log_path)
        schools = _admin(data_dir, "--json", "schools", "list")
        assert schools.returncode == 0, schools.stderr
        assert "demo" in [s["slug"] for s in msgspec.json.decode(schools.stdout)]
        made = _admin(
            data_dir,
            "users",
            "create",
            "--school",
            "demo",
            "--email",
            "new@demo.test",
            "--name",
            "New",
            "--role",
            "lecturer",
            "--password-stdin",
            stdin="a password typed into stdin\n",
        )
        assert made.returncode == 0, made.stderr
        listed = _admin(data_dir, "users", "list", "--school", "demo")
        assert "email=new@demo.test" in listed.stdout
        servers = _embedded(data_dir)
        process.send_signal(signal.SIGTERM)
        _stopped(process, servers, log_path)
    assert not running.exists()
    none = _admin(data_dir, "schools", "list")
    assert none.returncode == 2 and "no running `make run`" in none.stderr
    helped = _admin(data_dir, "--help")
    assert helped.returncode == 0 and "examples:" in helped.stdout
