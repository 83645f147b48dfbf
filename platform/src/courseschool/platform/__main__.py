"""`python -m courseschool.platform run|migrate|admin`.

`run`: the whole platform on one port, with embedded PostgreSQL and Redis unless
DATABASE_URL / REDIS_URL name real servers (migrated, with the demo school), and
development-sized abuse limits unless RATE_* say otherwise.
`migrate`: every service's migrations and the resource API's introspection client
(RS_CLIENT_ID / RS_CLIENT_SECRET), then exit: the deployments' one migration step.
`admin`: the authorization server's admin CLI against the running `run` (its data
folder says where its embedded servers listen), or against DATABASE_URL / REDIS_URL."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from courseschool.common.logging import configure_logging, get_logger
from courseschool.common.settings import BaseSettings, SettingsError, load_settings

from .migrate import migrate_all

log = get_logger("courseschool.platform")


class PlatformSettings(BaseSettings, kw_only=True, frozen=True):
    data_dir: str = ".data"
    host: str = "127.0.0.1"
    port: int = 8000
    key_encryption_key: str | None = None
    demo_email: str = "owner@demo.school"
    demo_password: str = "course-school-demo"


RS_CLIENT_ID = "resource-api"
RUNNING = "running.json"  # in the data folder while `run` serves: where its embedded servers listen
KEK_FILE = "key-encryption-key"
ADMIN_LOG = "admin-cli.log"  # in the data folder: the log of `admin` (its audit records)

# `run` is for a developer's machine: a test loop that registers a client and takes
# tokens on every run must not meet the production limits (see services/authz/README.md).
DEVELOPMENT_LIMITS = {
    "RATE_REGISTER_PER_IP": "1000/3600",
    "RATE_TOKEN_PER_IP": "3000/60",
    "RATE_TOKEN_PER_CLIENT": "1200/60",
    "RATE_LOGIN_PER_IP": "300/300",
    "RATE_AUTHORIZE_PER_IP": "1200/60",
}


RUN_SETTINGS = """settings (environment variables):
  PORT                 the port, as --port (8000); `make run PORT=8080` passes it
  HOST                 the address to listen on (127.0.0.1: this machine only)
  BASE_URL             the public origin (http://127.0.0.1:PORT); set it behind a proxy
  DATA_DIR             the embedded servers' data and the key-encryption key (.data)
  DATABASE_URL         a PostgreSQL server to use instead of the embedded one
  REDIS_URL            a Redis server to use instead of the embedded one
  KEY_ENCRYPTION_KEY   seals the signing keys (default: made once, kept in DATA_DIR)
  INTERNAL_TOKEN       the bearer token /metrics asks for (default: a new one each run,
                       printed at start)
  DEMO_EMAIL, DEMO_PASSWORD   the demo school owner's sign-in
  LOG_LEVEL, LOG_FORMAT       info; auto (console in a terminal, else JSON)
  RATE_*               abuse limits (development-sized here, printed at start)
  FORWARDED_ALLOW_IPS  proxies whose X-Forwarded-For is believed (none)"""


class MigrateSettings(BaseSettings, kw_only=True, frozen=True):
    rs_client_id: str | None = None
    rs_client_secret: str | None = None


async def prepare(database_url: str, *, demo_email: str, demo_password: str, rs_secret: str) -> None:
    """The migration step, then the demo school."""
    from courseschool.common.db import create_pool

    from .demo import prepare_demo

    await migrate_all(database_url, rs_client_id=RS_CLIENT_ID, rs_client_secret=rs_secret)
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        await prepare_demo(pool, email=demo_email, password=demo_password)
    finally:
        await pool.close()


def migrate() -> int:
    try:
        settings = load_settings(MigrateSettings)
        if not settings.database_url:
            raise SettingsError("DATABASE_URL: required")
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    asyncio.run(
        migrate_all(
            settings.database_url,
            rs_client_id=settings.rs_client_id,
            rs_client_secret=settings.rs_client_secret,
            report=True,
        )
    )
    return 0


def _shown_password(settings: PlatformSettings) -> str:
    """The default demo password is printed; one an operator chose is not."""
    default = msgspec.structs.fields(PlatformSettings)
    chosen = next(f.default for f in default if f.name == "demo_password")
    return settings.demo_password if settings.demo_password == chosen else "(the DEMO_PASSWORD you set)"


def _metrics_command(settings: PlatformSettings, made: str) -> str:
    """How to read /metrics here: it asks for INTERNAL_TOKEN. One made for this run is
    printed (it opens nothing but the probes and /metrics: `run` refuses /internal at its
    front); one the operator set is not, like a DEMO_PASSWORD they chose."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    where = f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"
    token = "$INTERNAL_TOKEN" if settings.internal_token else made
    return f'curl -H "Authorization: Bearer {token}" {where}/metrics'


def admin(argv: list[str]) -> int:
    """The admin CLI, pointed at the running `run` unless the environment names servers."""
    from courseschool.authz.admin_cli import main as admin_main

    data_dir = Path(os.environ.get("DATA_DIR", ".data"))
    running = _running(data_dir)
    if running is not None and not (os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL")):
        os.environ["DATABASE_URL"], os.environ["REDIS_URL"] = running["database_url"], running["redis_url"]
    os.environ.setdefault("ADMIN_LOG_FILE", str(data_dir / ADMIN_LOG))  # its log: beside the data, not on the terminal
    kek = data_dir / KEK_FILE
    if not os.environ.get("KEY_ENCRYPTION_KEY") and kek.is_file():
        os.environ["KEY_ENCRYPTION_KEY"] = kek.read_text().strip()
    hint = (
        f"no running `make run` found in {data_dir}/ (start it first), and DATABASE_URL, REDIS_URL and "
        "KEY_ENCRYPTION_KEY are not all set"
    )
    return admin_main(argv, prog="python -m courseschool.platform admin", missing=hint)


def _running(data_dir: Path) -> dict[str, str] | None:
    """What a live `run` on this data folder wrote at start; None if none is running."""
    import psutil

    try:
        found = msgspec.json.decode((data_dir / RUNNING).read_bytes(), type=dict[str, Any])
    except (OSError, msgspec.DecodeError):
        return None
    if not psutil.pid_exists(found.get("pid", -1)) or not found.get("database_url") or not found.get("redis_url"):
        return None
    return {"database_url": found["database_url"], "redis_url": found["redis_url"]}


def _write_running(data_dir: Path, database_url: str, redis_url: str) -> Path:
    """Owner-only: the embedded servers trust local connections."""
    path = data_dir / RUNNING
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(msgspec.json.encode({"pid": os.getpid(), "database_url": database_url, "redis_url": redis_url}))
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["admin"]:
        return admin(argv[1:])
    parser = argparse.ArgumentParser(prog="courseschool.platform")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="run the platform (embedded servers unless DATABASE_URL/REDIS_URL are set)",
        description="Run the whole platform on one port: the three services behind the gateway's routes,\n"
        "with an embedded PostgreSQL and Redis under DATA_DIR unless DATABASE_URL / REDIS_URL\n"
        "name servers. Stop it with Ctrl-C.",
        epilog=RUN_SETTINGS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--port",
        type=int,
        default=None,
        help="the port to listen on (default: the PORT setting, else 8000); BASE_URL follows it unless set",
    )
    sub.add_parser("migrate", help="apply every service's migrations (and register RS_CLIENT_ID), then exit")
    sub.add_parser("admin", help="administer the running platform (admin --help)")
    args = parser.parse_args(argv)
    if args.command == "migrate":
        return migrate()
    return run_platform(args)


def run_platform(args: argparse.Namespace) -> int:
    # The embedded servers: for `run` only (the image has none).
    from courseschool.common.cli import serve_app
    from courseschool.common.jose import new_kek
    from courseschool.common.secrets import new_token

    from .embedded import EmbeddedServers, read_or_create_secret
    from .instance import InstanceRefused, claim, ensure_port_free

    overrides: dict[str, Any] = {}
    if args.port is not None:
        overrides["port"] = args.port
    try:
        settings = load_settings(PlatformSettings, **overrides)
        if not os.environ.get("BASE_URL"):  # the public origin follows the port, --port or PORT
            settings = load_settings(PlatformSettings, **overrides, base_url=f"http://127.0.0.1:{settings.port}")
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    data_dir = Path(settings.data_dir)
    try:  # before anything is started: another `run` on this data folder, a busy port
        instance = claim(data_dir, host=settings.host, port=settings.port, base_url=settings.base_url)
    except InstanceRefused as exc:
        print(f"courseschool.platform: {exc}", file=sys.stderr)
        return 1
    servers = EmbeddedServers(data_dir)
    signals = StartUpSignals()
    limits = {name: os.environ.setdefault(name, value) for name, value in DEVELOPMENT_LIMITS.items()}
    running: Path | None = None
    start = StartUp()
    try:
        if settings.database_url:
            database_url = settings.database_url
        else:
            first = not (data_dir / "postgres" / "PG_VERSION").exists()
            with signals.held(), start.step("embedded PostgreSQL", "first start: initdb" if first else ""):
                database_url = servers.start_postgres()
        if settings.redis_url:
            redis_url = settings.redis_url
        else:
            with signals.held(), start.step("embedded Redis"):
                redis_url = servers.start_redis()
        kek = settings.key_encryption_key or read_or_create_secret(data_dir / KEK_FILE, new_kek)
        if not settings.database_url and not settings.redis_url:
            running = _write_running(data_dir, database_url, redis_url)
        rs_secret = new_token()
        with start.step("migrations and the demo school"):
            asyncio.run(
                prepare(
                    database_url,
                    demo_email=settings.demo_email,
                    demo_password=settings.demo_password,
                    rs_secret=rs_secret,
                )
            )
        internal_token = settings.internal_token or new_token()
        shared = {
            "base_url": settings.base_url,
            "database_url": database_url,
            "redis_url": redis_url,
            "key_encryption_key": kek,
            "internal_token": internal_token,
            "log_level": settings.log_level,
            "log_format": settings.log_format,
            "rs_client_id": RS_CLIENT_ID,
            "rs_client_secret": rs_secret,
            "forwarded_allow_ips": settings.forwarded_allow_ips,
        }
        print(
            f"\n  Course School is running at {settings.base_url}\n"
            f"  Discovery: {settings.base_url}/.well-known/oauth-authorization-server\n"
            f"  Demo login: {settings.demo_email} / {_shown_password(settings)}\n"
            f"  Data: {'external servers' if settings.database_url else data_dir.resolve()}\n"
            f"  Metrics: {_metrics_command(settings, internal_token)}\n"
            f"  Administer it: .venv/bin/python -m courseschool.platform admin --help\n"
            f"  Development limits (LIMIT/SECONDS; production is stricter): "
            f"{', '.join(f'{k} {v}' for k, v in limits.items())}",
            flush=True,
        )
        # The production server (granian, as `serve`): one worker process builds the app;
        # this process keeps the embedded servers and stops them once granian has stopped.
        ensure_port_free(settings.host, settings.port)  # again: taken while we started?
        start.announce_ready(settings.host, settings.port)
        serve_app(partial(_worker_app, shared), host=settings.host, port=settings.port, stop_on_hangup=True)
    except KeyboardInterrupt:
        pass
    except InstanceRefused as exc:
        print(f"courseschool.platform: {exc}", file=sys.stderr)
        return 1
    finally:
        signals.ignore()
        if running is not None:
            running.unlink(missing_ok=True)
        servers.stop()
        instance.release()
    return 0


def _worker_app(shared: dict[str, str]) -> Any:
    """In granian's worker: the three apps behind the router, behind the proxy-headers
    middleware and the held documents (`common.web.server_app`); /healthz and /readyz
    open to anyone (a developer's and the tests' probe)."""
    from courseschool.common.web import server_app

    from .app import build

    configure_logging(shared["log_level"], shared["log_format"])
    router = build(shared, public_probes=True)
    return server_app(router, router.apps, shared["forwarded_allow_ips"])


class StartUp:
    """What start-up is doing: one line as each step begins (a log line of its own may
    follow), then, once /readyz answers, how long it took to be ready and what took the
    time: from this process's start (the interpreter and the imports included) and, when
    `make run` says when it began (RUN_STARTED_AT, seconds since the epoch), from there
    too (its install included)."""

    READY_WITHIN = 120.0  # stop asking after this; the log says what went wrong

    def __init__(self) -> None:
        import psutil

        now, wall = time.monotonic(), time.time()
        self.began = now - max(wall - psutil.Process().create_time(), 0.0)
        try:
            make: float | None = float(os.environ.get("RUN_STARTED_AT", ""))
        except ValueError:
            make = None
        self.make_began = None if make is None else now - max(wall - make, 0.0)
        if self.make_began is not None:  # the process's start time is kept to the second or so
            self.began = max(self.began, self.make_began)
        self.steps: list[str] = [f"starting Python and the code {now - self.began:.1f} s"]

    @contextlib.contextmanager
    def step(self, what: str, detail: str = "") -> Iterator[None]:
        print(f"  {what}{f' ({detail})' if detail else ''} ...", flush=True)
        began = time.monotonic()
        yield
        self.steps.append(f"{what} {time.monotonic() - began:.1f} s")

    def ready_line(self, now: float, server: float) -> str:
        parts = ", ".join([*self.steps, f"the server and its apps {server:.1f} s"])
        line = f"\n  Ready in {now - self.began:.1f} s ({parts})"
        if self.make_began is not None:
            line += f"; {now - self.make_began:.1f} s since `make run`"
        return line + "\n"

    def announce_ready(self, host: str, port: int) -> None:
        """Asks /readyz from a thread of its own (granian takes this one), then prints."""
        probe_host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        url = f"http://{f'[{probe_host}]' if ':' in probe_host else probe_host}:{port}/readyz"
        serving = time.monotonic()
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via an HTTP(S)_PROXY

        def wait() -> None:
            while time.monotonic() - serving < self.READY_WITHIN:
                try:
                    with direct.open(url, timeout=1.0) as answer:
                        if answer.status == 200:
                            now = time.monotonic()
                            print(self.ready_line(now, now - serving), flush=True)
                            return
                except OSError:
                    pass  # not listening yet, or not ready (503)
                time.sleep(0.1)

        threading.Thread(target=wait, name="ready-announcer", daemon=True).start()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class StartUpSignals:
    """Until granian takes over (it handles SIGINT and SIGTERM, and for `run` SIGHUP and
    SIGQUIT): every stop signal unwinds start-up as Ctrl-C does, so the embedded servers
    started so far are stopped (by default SIGTERM and SIGHUP end the process at once).
    While a server is being started, the signal waits until it is up (and known, so it
    can be stopped)."""

    def __init__(self) -> None:
        self._holding = False
        self._received: int | None = None
        for stop in STOP_SIGNALS:
            signal.signal(stop, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if self._holding:
            self._received = signum
            return
        raise KeyboardInterrupt(signal.Signals(signum).name)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self._received is not None:
            raise KeyboardInterrupt(signal.Signals(self._received).name)

    @staticmethod
    def ignore() -> None:
        """Stopping already: let the servers stop."""
        for stop in STOP_SIGNALS:
            signal.signal(stop, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
