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
import os
import sys
from pathlib import Path

from courseschool.common.logging import configure_logging, get_logger
from courseschool.common.settings import BaseSettings, SettingsError, load_settings

from .migrate import migrate_all
from .run import KEK_FILE, run_platform, running_servers
from .run_settings import RUN_SETTINGS

log = get_logger("courseschool.platform")


ADMIN_LOG = "admin-cli.log"  # in the data folder: the log of `admin` (its audit records)


class MigrateSettings(BaseSettings, kw_only=True, frozen=True):
    rs_client_id: str | None = None
    rs_client_secret: str | None = None


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


def admin(argv: list[str]) -> int:
    """The admin CLI, pointed at the running `run` unless the environment names servers."""
    from courseschool.authz.admin_cli import main as admin_main

    data_dir = Path(os.environ.get("DATA_DIR", ".data"))
    running = running_servers(data_dir)
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


if __name__ == "__main__":
    sys.exit(main())
