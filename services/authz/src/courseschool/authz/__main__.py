"""`python -m courseschool.authz migrate|serve`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from courseschool.common.db import migrate_dsn
from courseschool.common.logging import configure_logging
from courseschool.common.settings import SettingsError, load_settings

from .settings import AuthzSettings

MIGRATIONS = Path(__file__).parent / "migrations"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="courseschool.authz", description="The authorization server.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate", help="apply pending SQL migrations, then exit")
    serve = sub.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    try:
        settings = load_settings(AuthzSettings)
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    if args.command == "migrate":
        if not settings.database_url:
            print("configuration error: DATABASE_URL is required", file=sys.stderr)
            return 2
        asyncio.run(migrate_dsn(settings.database_url, "authz", MIGRATIONS))
        return 0
    import uvicorn

    from .web.app import create_app

    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_config=None, proxy_headers=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
