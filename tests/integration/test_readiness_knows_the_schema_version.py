"""A service whose database is behind its code is not ready, and says why (both versions);
one whose database is ahead (the next release migrated: expand / contract) stays ready.
Checked at start (a log line) and at every /readyz, on a database of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import structlog
from litestar import Litestar

from courseschool.authz.app import MIGRATIONS as AUTHZ_MIGRATIONS
from courseschool.authz.app import create_app as create_authz
from courseschool.authz.settings import AuthzSettings
from courseschool.common.asgi import AppLifespan
from courseschool.common.db import migrate, migration_files
from courseschool.common.settings import load_settings
from courseschool.resource_api.app import MIGRATIONS as RESOURCE_MIGRATIONS
from courseschool.resource_api.app import create_app as create_resource
from courseschool.resource_api.settings import ResourceSettings

from ..support.infra import temporary_database
from .flow import BASE_URL

NEWEST = max(v for v, _, _ in migration_files(AUTHZ_MIGRATIONS))
NEXT = NEWEST + 1  # never a product migration: the folder is the test's own


def next_release(folder: Path) -> tuple[Path, Path]:
    """The product's authz migrations and, after them, a test-only one: an expansion."""
    (folder / f"{NEXT:04d}_readiness_probe.sql").write_text(
        "CREATE TABLE readiness_probe (id bigint PRIMARY KEY);\n"
        "ALTER TABLE authz_clients ADD COLUMN readiness_probe_note text;\n"
    )
    return (AUTHZ_MIGRATIONS, folder)


def authz(database_url: str, redis_url: str, kek: str, migrations: Any = AUTHZ_MIGRATIONS) -> Litestar:
    settings = load_settings(
        AuthzSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=redis_url,
        key_encryption_key=kek,
        internal_token="internal-test-token",
    )
    return create_authz(settings, migrations=migrations)


@asynccontextmanager
async def running(app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    async with AppLifespan(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            yield client


async def test_behind_is_not_ready_and_names_both_versions_until_migrated(
    postgres_admin_url: str, migrated_template: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    migrations = next_release(tmp_path)
    async with temporary_database(postgres_admin_url, template=migrated_template) as url:
        with structlog.testing.capture_logs() as events:
            app = authz(url, redis_url, kek, migrations)
            async with running(app) as client:
                behind = await client.get("/readyz")
                assert behind.status_code == 503, behind.text
                body = behind.json()
                assert body["status"] == "unavailable"
                assert body["checks"]["postgres"] == "ok" and body["checks"]["redis"] == "ok"
                reason = body["checks"]["schema"]
                assert reason.startswith("behind:") and f"{NEWEST:04d}" in reason and f"{NEXT:04d}" in reason
                assert body["schema"] == {
                    "service": "authz",
                    "code": NEXT,
                    "database": NEWEST,
                    "state": "behind",
                    "missing": [NEXT],
                }
                assert (await client.get("/healthz")).status_code == 200  # alive: not restarted, just not ready

                conn = await asyncpg.connect(url)
                try:
                    assert await migrate(conn, "authz", migrations) == [f"{NEXT:04d}_readiness_probe"]
                finally:
                    await conn.close()

                ready = await client.get("/readyz")
                assert ready.status_code == 200, ready.text
                assert ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "schema": "ok"}
                assert ready.json()["schema"] == {
                    "service": "authz",
                    "code": NEXT,
                    "database": NEXT,
                    "state": "current",
                }
        started = [e for e in events if e["event"] in ("schema_behind", "schema_version")]
        assert started[0]["event"] == "schema_behind" and started[0]["missing"] == [NEXT], started


async def test_ahead_stays_ready(
    postgres_admin_url: str, migrated_template: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    """The next release migrated while this one serves: still ready, and says so."""
    async with temporary_database(postgres_admin_url, template=migrated_template) as url:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn, "authz", next_release(tmp_path))
        finally:
            await conn.close()
        with structlog.testing.capture_logs() as events:
            async with running(authz(url, redis_url, kek)) as client:
                ready = await client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["schema"] == {"service": "authz", "code": NEWEST, "database": NEXT, "state": "ahead"}
        assert [e["state"] for e in events if e["event"] == "schema_version"] == ["ahead"]


async def test_resource_api_is_not_ready_on_a_database_without_its_migrations(
    postgres_admin_url: str, migrated_template: str, redis_url: str, kek: str
) -> None:
    """The resource API checks its own service's migrations, as recorded by the runner."""
    newest = max(v for v, _, _ in migration_files(RESOURCE_MIGRATIONS))
    async with temporary_database(postgres_admin_url, template=migrated_template) as url:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("DELETE FROM schema_migrations WHERE service = 'resource_api' AND version = $1", newest)
        finally:
            await conn.close()
        settings = load_settings(
            ResourceSettings,
            environ={},
            base_url=BASE_URL,
            database_url=url,
            redis_url=redis_url,
            internal_token="internal-test-token",
        )
        async with running(create_resource(settings)) as client:
            behind = await client.get("/readyz")
            assert behind.status_code == 503, behind.text
            assert behind.json()["schema"] == {
                "service": "resource_api",
                "code": newest,
                "database": newest - 1,
                "state": "behind",
                "missing": [newest],
            }
