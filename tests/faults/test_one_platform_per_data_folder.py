"""One data folder, one platform; one port, one server. A second
`python -m courseschool.platform run` on a data folder that a running one holds is
refused with a message naming the holder (pid, address) and touches nothing: it neither
attaches to nor stops the first one's embedded PostgreSQL and Redis. A busy port is a
clear error, before anything is started or made. The lock goes with its process,
however it ends.

The first platform runs on its own embedded servers, as `make run` does, in a folder
outside pytest's temporary directory (tests/faults/servers.py says why)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from courseschool.platform.instance import InstanceRefused, claim

from ..support.net import free_port
from ..support.serving import platform_command, spawn, stop, wait_until_answering
from .servers import server_folder

READY_TIMEOUT = 90.0
REFUSAL_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
_PLATFORM_ENV = ("DATABASE_URL", "REDIS_URL", "BASE_URL", "DATA_DIR", "HOST", "PORT", "KEY_ENCRYPTION_KEY")


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PLATFORM_ENV}
    env.update(DATA_DIR=str(data_dir), LOG_FORMAT="json", PYTHONUNBUFFERED="1")
    return env


def _command(port: int) -> list[str]:
    return platform_command(port)


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-6000:] if path.exists() else ""


@contextlib.contextmanager
def _platform(data_dir: Path, port: int, log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`run` with embedded servers in `data_dir`, until /readyz answers; Ctrl-C after."""
    process = spawn(_command(port), _env(data_dir), log_path)
    try:
        wait_until_answering(
            process, f"http://127.0.0.1:{port}/readyz", log_path, timeout=READY_TIMEOUT, what="the platform"
        )
        yield process
    finally:
        stop(process, signal.SIGINT, timeout=STOP_TIMEOUT)


def _refused(data_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    """A second `run`, which must exit by itself; one that starts is stopped (Ctrl-C)
    and fails the test."""
    process = subprocess.Popen(
        _command(port),
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        out, err = process.communicate(timeout=REFUSAL_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=STOP_TIMEOUT)
        pytest.fail(f"the second run started instead of refusing:\n{out[-3000:]}\n{err[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _files(folder: Path) -> dict[str, bytes]:
    """What `run` itself writes at the top of its data folder (the servers' own folders
    change by themselves)."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.suffix != ".log"}


@pytest.fixture
def folder() -> Iterator[Path]:
    path = server_folder()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_second_run_on_a_held_data_folder_or_a_busy_port_is_refused_and_touches_nothing(folder: Path) -> None:
    data_dir = folder / "data"
    port = free_port()
    with _platform(data_dir, port, folder / "first.log") as first:
        before = _files(data_dir)
        assert {"running.json", "platform.lock"} <= set(before), sorted(before)

        # The same checkout on another port (it would have attached to the first one's
        # embedded servers), and on the same port: the data folder's holder is named.
        for second_port in (free_port(), port):
            refused = _refused(data_dir, second_port)
            assert refused.returncode == 1, (refused.stdout, refused.stderr)
            message = refused.stderr.strip()
            assert f"another platform is running on the data folder {data_dir.resolve()}" in message
            assert f"pid {first.pid}, serving http://127.0.0.1:{port}" in message, message
            assert "Course School is running" not in refused.stdout

        # Another data folder on the busy port: the port is named; the folder is not made.
        elsewhere = folder / "elsewhere"
        refused = _refused(elsewhere, port)
        assert refused.returncode == 1, (refused.stdout, refused.stderr)
        assert f"address 127.0.0.1:{port} is in use; choose another with --port or PORT" in refused.stderr
        assert not elsewhere.exists()

        # The first platform was not touched: same files, its servers up.
        assert _files(data_dir) == before
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5.0)
        assert ready.status_code == 200 and set(ready.json()["checks"].values()) == {"ok"}, ready.text
        assert first.poll() is None
    assert first.returncode == 0, _tail(folder / "first.log")

    # Stopped, it left its lock file behind, unlocked: the next run starts.
    assert (data_dir / "platform.lock").exists()
    with _platform(data_dir, free_port(), folder / "again.log") as again:
        assert again.poll() is None


def test_a_data_folder_lock_goes_with_its_process_whatever_ends_it(folder: Path) -> None:
    """SIGKILL leaves no stale lock: the kernel releases it with the process."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from courseschool.platform.instance import claim;"
            f"claim(Path({str(folder)!r}), host='127.0.0.1', port=0, base_url='http://x');"
            "print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(InstanceRefused, match=f"pid {holder.pid}, serving http://127.0.0.1:0"):
            claim(folder, host="127.0.0.1", port=0, base_url="http://x")
        holder.kill()
        holder.wait(timeout=10)
        lock = claim(folder, host="127.0.0.1", port=0, base_url="http://x")
        lock.release()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
