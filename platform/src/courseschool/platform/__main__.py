"""`python -m courseschool.platform run`: the whole platform on one port, with embedded
PostgreSQL and Redis unless DATABASE_URL / REDIS_URL name real servers."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import msgspec
import uvicorn

from courseschool.common.db import migrate_dsn
from courseschool.common.jose import new_kek
from courseschool.common.logging import configure_logging, get_logger
from courseschool.common.secrets import new_token
from courseschool.common.settings import BaseSettings, SettingsError, load_settings

from .app import MIGRATIONS, build
from .embedded import EmbeddedServers, read_or_create_secret

log = get_logger("courseschool.platform")


class PlatformSettings(BaseSettings, kw_only=True, frozen=True):
    data_dir: str = ".data"
    host: str = "127.0.0.1"
    port: int = 8000
    key_encryption_key: str | None = None
    demo_email: str = "owner@demo.school"
    demo_password: str = "course-school-demo"


RS_CLIENT_ID = "resource-api"


async def prepare(database_url: str, *, demo_email: str, demo_password: str, rs_secret: str) -> None:
    """Migrations, the resource server's introspection client, the demo school."""
    from courseschool.authz.seed import ensure_service_client, seed_demo
    from courseschool.common.db import create_pool
    from courseschool.resource_api.seed import seed_demo as seed_resources

    for service, directory in MIGRATIONS:
        await migrate_dsn(database_url, service, directory)
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        await ensure_service_client(pool, client_id=RS_CLIENT_ID, secret=rs_secret, name="Course School API")
        school_id, owner_id = await seed_demo(pool, email=demo_email, password=demo_password)
        await seed_resources(pool, school_id=school_id, slug="demo", owner_id=owner_id)
    finally:
        await pool.close()


def _shown_password(settings: PlatformSettings) -> str:
    """The default demo password is printed; one an operator chose is not."""
    default = msgspec.structs.fields(PlatformSettings)
    chosen = next(f.default for f in default if f.name == "demo_password")
    return settings.demo_password if settings.demo_password == chosen else "(the DEMO_PASSWORD you set)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="courseschool.platform")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the platform (embedded servers unless DATABASE_URL/REDIS_URL are set)")
    run.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    overrides = {}
    if args.port is not None:
        overrides["port"] = args.port
        import os

        if not os.environ.get("BASE_URL"):
            overrides["base_url"] = f"http://127.0.0.1:{args.port}"
    try:
        settings = load_settings(PlatformSettings, **overrides)
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    data_dir = Path(settings.data_dir)
    servers = EmbeddedServers(data_dir)
    try:
        database_url = settings.database_url or servers.start_postgres()
        redis_url = settings.redis_url or servers.start_redis()
        kek = settings.key_encryption_key or read_or_create_secret(data_dir / "key-encryption-key", new_kek)
        rs_secret = new_token()
        asyncio.run(prepare(
            database_url, demo_email=settings.demo_email, demo_password=settings.demo_password, rs_secret=rs_secret
        ))
        shared = {
            "base_url": settings.base_url, "database_url": database_url, "redis_url": redis_url,
            "key_encryption_key": kek, "internal_token": settings.internal_token or new_token(),
            "log_level": settings.log_level, "log_format": settings.log_format,
            "rs_client_id": RS_CLIENT_ID, "rs_client_secret": rs_secret,
        }
        app = build(shared)
        print(
            f"\n  Course School is running at {settings.base_url}\n"
            f"  Discovery: {settings.base_url}/.well-known/oauth-authorization-server\n"
            f"  Demo login: {settings.demo_email} / {_shown_password(settings)}\n"
            f"  Data: {'external servers' if settings.database_url else data_dir.resolve()}\n",
            flush=True,
        )
        uvicorn.run(app, host=settings.host, port=settings.port, log_config=None, timeout_graceful_shutdown=10)
    finally:
        servers.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
