"""`python -m courseschool.platform migrate`: the one migration step of every
deployment (the compose file's `migrate` service, the Kubernetes Job, `make run`).

Applies every service's forward-only migrations (under the runner's advisory lock, so
a second run or a concurrent pod waits, then finds nothing to do) and, when
RS_CLIENT_ID and RS_CLIENT_SECRET are set, registers the resource API's confidential
introspection client. Idempotent."""

from __future__ import annotations

from pathlib import Path

from courseschool.authz.app import MIGRATIONS as AUTHZ_MIGRATIONS
from courseschool.authz.storage.clients import PgClientStore
from courseschool.common.db import create_pool, migrate_dsn
from courseschool.resource_api.app import MIGRATIONS as RESOURCE_MIGRATIONS

# In order: the resource API's tables refer to nothing of authz's, but authz is the owner of schools.
MIGRATIONS: list[tuple[str, Path]] = [("authz", AUTHZ_MIGRATIONS), ("resource_api", RESOURCE_MIGRATIONS)]
RS_CLIENT_NAME = "Course School API"


async def migrate_all(
    database_url: str, *, rs_client_id: str | None = None, rs_client_secret: str | None = None, report: bool = False
) -> None:
    for service, directory in MIGRATIONS:
        applied = await migrate_dsn(database_url, service, directory)
        if report:
            print(f"{service}: applied {', '.join(applied)}" if applied else f"{service}: up to date", flush=True)
    if rs_client_id and rs_client_secret:
        pool = await create_pool(database_url, min_size=1, max_size=1)
        try:
            await PgClientStore(pool).ensure_service_client(
                client_id=rs_client_id, secret=rs_client_secret, name=RS_CLIENT_NAME
            )
        finally:
            await pool.close()
        if report:
            print(f"introspection client {rs_client_id}: registered", flush=True)
