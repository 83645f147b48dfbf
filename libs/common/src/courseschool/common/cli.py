"""The command line every service shares: `migrate` and `serve`.

`python -m courseschool.<service> migrate` applies the service's migrations and exits
(a Kubernetes Job or init container runs it); `serve` runs the HTTP server. A missing
or malformed setting stops start-up with one clear line and exit code 2.

The server is granian, chosen by measurement (bench/RESULTS.md, "uvicorn or granian");
the all-in-one's `run` uses the same `serve_app`. Its workers are processes
that build the app from the same environment; each app is wrapped in our proxy-headers
middleware (`forwarded.py`: FORWARDED_ALLOW_IPS only, X-Forwarded-For read from the
right). HTTP/1.1 only, with a header read timeout: a client that has not sent its whole
request head within HEADER_READ_TIMEOUT seconds of its first byte, or leaves a kept-alive
connection idle that long, is disconnected (slowloris). HTTP/2 is not offered: granian's
protocol detection waits for a new connection's first bytes without any time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from .db import migrate_dsn
from .logging import configure_logging
from .settings import BaseSettings, SettingsError, load_settings
from .web import server_app


def service_main(
    *,
    service: str,
    settings_cls: type[BaseSettings],
    create_app: Callable[[Any], Any],
    migrations: Path | None,
    default_port: int,
    argv: list[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog=f"courseschool.{service}")
    sub = parser.add_subparsers(dest="command", required=True)
    if migrations is not None:
        sub.add_parser("migrate", help="apply pending SQL migrations, then exit")
    serve = sub.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=default_port)
    serve.add_argument("--workers", type=int, default=1, help="worker processes (scale pods first)")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(settings_cls)
        if migrations is not None and not settings.database_url:  # a service with tables of its own
            raise SettingsError("DATABASE_URL: required")
        if args.command == "serve" and not settings.redis_url:
            raise SettingsError("REDIS_URL: required")
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    if args.command == "migrate":
        assert migrations is not None and settings.database_url is not None
        asyncio.run(migrate_dsn(settings.database_url, service, migrations))
        return 0
    serve_app(partial(_worker_app, settings_cls, create_app), host=args.host, port=args.port, workers=args.workers)
    return 0


# Seconds a stopping worker gets to finish requests in flight (the pods' grace period is 30).
SHUTDOWN_GRACE = 20


_GRANIAN_LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"_granian": {"propagate": True}, "granian.access": {"propagate": False}},
}


# Seconds a client has to send a request's head (from its first byte), and that a kept-alive
# connection may stay idle (nginx in front allows 15 s for a head; clients send it at once).
HEADER_READ_TIMEOUT = 10


def serve_app(
    loader: Callable[[], Any], *, host: str, port: int, workers: int = 1, stop_on_hangup: bool = False
) -> None:
    """Run granian with `loader` building the ASGI app inside each worker process.
    SIGINT and SIGTERM stop it gracefully; SIGHUP respawns the workers (granian's
    reload), or, with `stop_on_hangup` (the all-in-one), stops it as SIGQUIT then does."""
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.http import HTTP1Settings
    from granian.server import MPServer as Server  # what granian.server.Server is on a GIL build

    class _Server(Server):
        def startup(self, spawn_target: Any, target_loader: Any) -> None:
            if stop_on_hangup:
                signal.signal(signal.SIGQUIT, self.signal_handler_interrupt)
            super().startup(spawn_target, target_loader)

        def signal_handler_reload(self, *args: Any, **kwargs: Any) -> None:  # granian's SIGHUP handler
            if stop_on_hangup:
                self.signal_handler_interrupt()
            else:
                super().signal_handler_reload(*args, **kwargs)

    server = _Server(
        "courseschool",
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        workers=workers,
        http=HTTPModes.http1,
        # uvloop: the event loop's own work (polling, callbacks, socket writes) is a large
        # share of a token request's CPU on asyncio's pure-Python loop (bench/RESULTS.md).
        loop=Loops.uvloop,
        http1_settings=HTTP1Settings(header_read_timeout=HEADER_READ_TIMEOUT * 1000),
        # granian's own records go to the root handler configure_logging set up (one format).
        log_dictconfig=_GRANIAN_LOGGING,
        log_access=False,
        workers_kill_timeout=SHUTDOWN_GRACE,
        respawn_failed_workers=True,
    )
    server.serve(target_loader=loader, wrap_loader=False)


def _worker_app(settings_cls: type[BaseSettings], create_app: Callable[[Any], Any]) -> Any:
    """Runs in a worker: the environment was checked by the parent, so load it again as is."""
    settings = load_settings(settings_cls)
    configure_logging(settings.log_level, settings.log_format)
    app = create_app(settings)
    return server_app(app, [app], settings.forwarded_allow_ips)
