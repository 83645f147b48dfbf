"""Finding 23: `python -m courseschool.platform run` with its embedded PostgreSQL and
Redis (no DATABASE_URL / REDIS_URL) stops everything it started on any stop signal
(SIGTERM from kill, systemd or a container stop, SIGHUP from a closed terminal, SIGINT,
SIGQUIT), and exits 0; also when the signal comes while it is still starting.

The embedded servers are found by what they run on: the postmaster with `-D` in the
data folder (and its children), the valkey-server whose working folder is there."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ..support.net import free_port
from ..support.serving import PLATFORM_ENV, platform_command, spawn, tail, wait_until_answering

# pytest-xdist: one worker: one data folder (initdb once) for every start of the module.
pytestmark = pytest.mark.xdist_group("stop-signals")
START_TIMEOUT = 120.0  # the first start runs initdb
EXIT_TIMEOUT = 40.0  # granian's worker grace (20 s) plus stopping both servers (10 s each at most)


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    """One data folder for every start (initdb once); outside pytest's temporary directory,
    which is closed to PostgreSQL's own user when the tests run as root (tests/faults/servers.py)."""
    with _data_folder("cs-stop-signals-") as folder:
        yield folder


@contextlib.contextmanager
def _data_folder(prefix: str) -> Iterator[Path]:
    """A new data folder for `run`; afterwards the embedded servers still running on it
    (a failed test's) are killed and the folder removed."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        for process in _embedded(folder):
            with contextlib.suppress(psutil.Error):
                process.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _embedded(folder: Path) -> list[psutil.Process]:
    """The embedded servers' processes: postmaster and children, valkey-server."""
    found = []
    for process in psutil.process_iter(["name", "cmdline", "cwd"]):
        cmdline = process.info["cmdline"] or []
        cwd = process.info["cwd"] or ""
        if process.info["name"] == "postgres" and str(folder / "postgres") in cmdline:
            found.append(process)
            with contextlib.suppress(psutil.Error):
                found += process.children(recursive=True)
        elif (process.info["name"] or "").startswith("valkey-server") and cwd.startswith(str(folder)):
            found.append(process)
    return found


def _name(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.Error:
        return "(gone)"


@contextlib.contextmanager
def _platform(folder: Path, log_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV and not k.startswith("RATE_")}
    env.update(DATA_DIR=str(folder), LOG_FORMAT="json", PYTHONUNBUFFERED="1")
    # A session of its own: a failed test kills granian's worker with it.
    process = spawn(platform_command(port), env, log_path, new_session=True)
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def _wait_ready(process: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    wait_until_answering(process, f"{base}/readyz", log_path, timeout=START_TIMEOUT, what="the platform")


def _stopped(process: subprocess.Popen[bytes], servers: list[psutil.Process], log_path: Path) -> None:
    code = process.wait(timeout=EXIT_TIMEOUT)
    assert code == 0, f"exit {code}:\n{tail(log_path)}"
    _, alive = psutil.wait_procs(servers, timeout=10)
    assert not alive, f"still running after the platform exited: {[(p.pid, _name(p)) for p in alive]}"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT], ids=lambda s: s.name)
def test_a_stop_signal_stops_the_embedded_servers(data_dir: Path, tmp_path: Path, stop) -> None:
    log_path = tmp_path / "platform.log"
    with _platform(data_dir, log_path) as (process, base):
        _wait_ready(process, base, log_path)
        servers = _embedded(data_dir)
        names = {_name(p) for p in servers}
        assert {"postgres", "valkey-server"} <= names, f"embedded servers not found: {names}"
        process.send_signal(stop)
        _stopped(process, servers, log_path)
    assert _embedded(data_dir) == []


def test_a_stop_signal_during_start_up_stops_what_was_started(data_dir: Path, tmp_path: Path) -> None:
    """SIGTERM as soon as the embedded PostgreSQL runs, before the platform serves."""
    log_path = tmp_path / "platform.log"
    with _platform(data_dir, log_path) as (process, _):
        deadline = time.monotonic() + START_TIMEOUT
        while not (servers := _embedded(data_dir)):
            assert process.poll() is None, f"exited early:\n{tail(log_path)}"
            assert time.monotonic() < deadline, f"no embedded server started:\n{tail(log_path)}"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _stopped(process, servers, log_path)
        time.sleep(1)  # nothing is started after the signal either
    assert _embedded(data_dir) == []
