"""The platform as the bench runs it: the bench's PostgreSQL and Redis, scratch databases
and their copies, the demo owner, the settings every server of the bench gets (limits no
load reaches), and the command that serves it (granian from the packages the image ships,
or uvicorn)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from bench import shipped
from courseschool.common.cli import HEADER_READ_TIMEOUT
from courseschool.common.jose import new_kek
from courseschool.common.secrets import new_token
from tests.support.infra import temporary_database

PG = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
EMAIL, PASSWORD = "bench-owner@example.test", "bench password for the owner"


def redis_url() -> str:
    """The Redis of the bench's servers: BENCH_REDIS_URL, which main() sets when it starts
    the bench's own (read at each use, so that every module and subprocess sees the same)."""
    return os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")


def scratch_database(prefix: str) -> contextlib.AbstractAsyncContextManager[str]:
    """A database of its own on the bench server, dropped afterwards."""
    return temporary_database(PG, prefix)


def copy_of(dsn: str, suffix: str, *, admin: str | None = None) -> contextlib.AbstractAsyncContextManager[str]:
    """A copy of the database of `dsn` as it is now (CREATE DATABASE ... TEMPLATE), dropped
    afterwards; `admin` is another database of the same server. The backends of servers
    just stopped may still be leaving the source: PostgreSQL waits for them."""
    source = urlsplit(dsn).path.lstrip("/")
    return temporary_database(admin or PG, f"{source}_{suffix}", template=source)


KEK = new_kek()


# Limits no bench load reaches: the counts of every server of a run (and of the runs before
# it within the windows) meet in the bench's Redis, so no server of the bench keeps the
# production defaults.
RATES = {
    "RATE_REGISTER_PER_IP": "100000/60",
    "RATE_TOKEN_PER_IP": "1000000/60",
    "RATE_TOKEN_PER_CLIENT": "1000000/60",
    "RATE_INTROSPECT_PER_IP": "1000000/60",
    "RATE_INTROSPECT_PER_CLIENT": "1000000/60",
    "RATE_LOGIN_PER_IP": "100000/60",
    "RATE_AUTHORIZE_PER_IP": "100000/60",
}


def platform_env(dsn: str, redis: str, port: int, mode: str, data: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": redis,
        "KEY_ENCRYPTION_KEY": KEK,
        "DEMO_EMAIL": EMAIL,
        "DEMO_PASSWORD": PASSWORD,
        "LOG_LEVEL": "info",
        "LOG_FORMAT": "json",
        "DATA_DIR": str(data),
        "TOKEN_VALIDATION": mode,
        "BASE_URL": f"http://127.0.0.1:{port}",
        **RATES,
        "INTERNAL_TOKEN": INTERNAL,
        "RS_CLIENT_ID": RS_CLIENT_ID,
        "RS_CLIENT_SECRET": RS_SECRET,
    }


RS_CLIENT_ID = "resource-api"
RS_SECRET = new_token()
INTERNAL = new_token()


def in_process_settings(dsn: str, base: str) -> dict[str, str]:
    """The all-in-one app's settings when the bench builds it in its own process
    (courseschool.platform.app.build), with the same generous limits as platform_env."""
    return {
        "base_url": base,
        "database_url": dsn,
        "redis_url": redis_url(),
        "key_encryption_key": KEK,
        "internal_token": INTERNAL,
        "rs_client_id": RS_CLIENT_ID,
        "rs_client_secret": RS_SECRET,
        **{name.lower(): value for name, value in RATES.items()},
    }


def server_command(server: str, port: int, app: str = "courseschool.platform.asgi:app", workers: int = 1) -> list[str]:
    """granian from the packages the image ships (`shipped.py`); uvicorn, a development
    runner only, from the bench's own Python."""
    if server == "granian":
        return [
            str(shipped.python().with_name("granian")),
            "--interface",
            "asgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-ws",
            # As production serves (common/cli.py: serve_app): HTTP/1.1 only, with the
            # header read timeout.
            "--http",
            "1",
            "--http1-header-read-timeout",
            str(HEADER_READ_TIMEOUT * 1000),
            "--loop",
            "uvloop",
            "--log-level",
            "warning",
            "--workers",
            str(workers),
            app,
        ]
    return [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
        "--workers",
        str(workers),
    ]
