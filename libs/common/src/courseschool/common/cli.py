"""The command line every service shares: `migrate` and `serve`.

`python -m courseschool.<service> migrate` applies the service's migrations and exits
(a Kubernetes Job or init container runs it); `serve` runs the HTTP server. A missing
or malformed setting stops start-up with one clear line and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .db import migrate_dsn
from .logging import configure_logging
from .settings import BaseSettings, SettingsError, load_settings


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
    args = parser.parse_args(argv)
    try:
        settings = load_settings(settings_cls)
        if not settings.database_url:
            raise SettingsError("DATABASE_URL: required")
        if args.command == "serve" and not settings.redis_url:
            raise SettingsError("REDIS_URL: required")
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    if args.command == "migrate":
        assert migrations is not None
        asyncio.run(migrate_dsn(settings.database_url, service, migrations))
        return 0
    import uvicorn

    uvicorn.run(
        create_app(settings), host=args.host, port=args.port, log_config=None, proxy_headers=True,
        timeout_graceful_shutdown=20,
    )
    return 0
