"""Servers a test starts as processes of their own (the platform's `run`, a service's
`serve`, granian on the ASGI app): started with their output in a log file, waited for
until a probe answers 200, stopped with a signal. One home for what the end-to-end, fault
and deployment tests each used to write for themselves.

The wait is a bound, never a pause: the probe is asked again every READY_INTERVAL until
it answers, the process exits (the test fails with its log's tail) or the deadline passes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import httpx
import pytest

READY_INTERVAL = 0.05  # between two asks of the probe
STOP_TIMEOUT = 15.0

# Settings the all-in-one platform reads from the environment: a test that starts it
# removes them from its own environment and decides each one it needs.
PLATFORM_ENV = (
    "DATABASE_URL",
    "REDIS_URL",
    "BASE_URL",
    "DEMO_EMAIL",
    "DEMO_PASSWORD",
    "KEY_ENCRYPTION_KEY",
    "DATA_DIR",
    "LOG_FORMAT",
    "LOG_LEVEL",
    "INTERNAL_TOKEN",
    "HOST",
    "PORT",
    "FORWARDED_ALLOW_IPS",
    "DEV",
    "REDIS_SENTINEL_MASTER",
    "REDIS_SENTINELS",
)


def tail(path: Path, limit: int = 8000) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return text[-limit:]


def platform_command(port: int | None = None) -> list[str]:
    """`python -m courseschool.platform run` (what `make run` runs), on `port` if given."""
    command = [sys.executable, "-m", "courseschool.platform", "run"]
    return [*command, "--port", str(port)] if port is not None else command


def spawn(
    command: Sequence[str],
    env: Mapping[str, str],
    log_path: Path,
    *,
    new_session: bool = False,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """`command` started with its stdout and stderr in `log_path`, no stdin; in a session of
    its own when `new_session` (a server's workers can then be killed with it)."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            list(command),
            env=dict(env),
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=new_session,
        )


def wait_until_answering(
    process: subprocess.Popen[bytes],
    url: str,
    log_path: Path,
    *,
    timeout: float,
    what: str = "the server",
    headers: Mapping[str, str] | None = None,
    also: Callable[[], bool] | None = None,
) -> None:
    """Return once GET `url` answers 200 (and `also()` holds, when given); fail the test
    with the log's tail if the process exits first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    # One client for the whole wait: each new one builds a TLS context and reads the CA
    # bundle (some 30 ms of CPU), which, asked every 50 ms while a server starts, was a
    # fifth of the test processes' work in a whole run.
    with httpx.Client(headers=dict(headers or {}), timeout=2.0) as http:
        while True:
            code = process.poll()
            if code is not None:
                pytest.fail(f"{what} exited early with status {code}:\n{tail(log_path)}")
            try:
                response = http.get(url)
                if response.status_code == 200 and (also is None or also()):
                    return
                last = f"{response.status_code} {response.text[:300]}"
            except httpx.HTTPError as exc:
                last = repr(exc)
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer {url} within {timeout:.0f} s ({last}):\n{tail(log_path)}")
            time.sleep(READY_INTERVAL)


def stop(
    process: subprocess.Popen[bytes], sig: int = signal.SIGINT, *, timeout: float = STOP_TIMEOUT, group: bool = False
) -> None:
    """`sig`, then SIGKILL (to its whole session when `group`) if it has not exited
    within `timeout`."""
    if process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        if group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait(timeout=10)
