"""A rolling upgrade on the production topology (three `serve` processes behind nginx,
tests/support/split.py): the current release serves; the next one (the same code with
one more authz migration, a test-only expansion: tests/support/next_release.py) starts
beside it and is not ready while the database lacks its migration; the old release
keeps serving through all of it; the next release's migration step runs (twice at once,
as two pods' init steps would: applied once, under the runner's advisory lock); the new
instance becomes ready, the old one stays ready (the database is ahead of it), and the
two serve side by side: tokens of one are refreshed at the other, and the resource API
of the old release accepts the new one's tokens."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from courseschool.authz.app import MIGRATIONS as AUTHZ_MIGRATIONS
from courseschool.common.db import migration_files

from ..support.deployment import nginx_or_skip
from ..support.infra import temporary_database_blocking
from ..support.net import free_port
from ..support.oauth_client import code_flow
from ..support.split import Service, Topology, running_topology

NEXT_RELEASE = Path(__file__).resolve().parents[1] / "support" / "next_release.py"
CURRENT = max(v for v, _, _ in migration_files(AUTHZ_MIGRATIONS))
NEXT = CURRENT + 1  # the test's own folder: never a product migration
SCOPE = "openid email courses:read"
CALLBACK = "http://127.0.0.1:9/callback"

# An expansion, as a release's migration must be (make check's squawk says so for the
# product's): a table, nullable columns and one with a default on the tables every
# token request writes. The old release's statements name their columns and never see them.
EXPANSION = """
CREATE TABLE authz_rolling_upgrade_marks (grant_id uuid PRIMARY KEY, marked_at timestamptz NOT NULL DEFAULT now());
ALTER TABLE authz_clients ADD COLUMN rolling_upgrade_note text;
ALTER TABLE authz_grants ADD COLUMN rolling_upgrade_note text;
ALTER TABLE authz_refresh_tokens ADD COLUMN rolling_upgrade_generation integer NOT NULL DEFAULT 0;
"""


@dataclass
class NextRelease(Service):
    """A service process of the next release: `next_release.py FOLDER <service> serve`."""

    folder: Path = Path()

    @property
    def command(self) -> list[str]:
        return [
            self.python,
            str(NEXT_RELEASE),
            str(self.folder),
            self.package,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]


@pytest.fixture(scope="module")
def topology(
    postgres_admin_url: str, redis_url: str, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Topology]:
    nginx = nginx_or_skip()
    with temporary_database_blocking(postgres_admin_url) as database_url:
        with running_topology(database_url, redis_url, kek, tmp_path_factory.mktemp("rolling"), nginx) as running:
            yield running


def _migrations_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "next-release-migrations"
    folder.mkdir()
    (folder / f"{NEXT:04d}_rolling_upgrade_expansion.sql").write_text(EXPANSION)
    return folder


async def _readyz(http: httpx.AsyncClient, address: str) -> tuple[int, dict[str, Any]]:
    answer = await http.get(f"{address}/readyz")
    return answer.status_code, answer.json()


async def _until(probe: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = await probe()
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


async def _refresh(http: httpx.AsyncClient, at: str, client_id: str, token: str) -> dict[str, Any]:
    answer = await http.post(
        f"{at}/api/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    )
    assert answer.status_code == 200, (at, answer.text)
    return answer.json()


async def _old_release_answers(http: httpx.AsyncClient, topology: Topology) -> None:
    """Through the gateway (to the old release): discovery, a registration (a write)."""
    meta = await http.get(f"{topology.base_url}/.well-known/oauth-authorization-server")
    assert meta.status_code == 200, meta.text
    registered = await http.post(f"{topology.base_url}/api/oauth/register", json={"redirect_uris": [CALLBACK]})
    assert registered.status_code == 201, registered.text


async def _old_release_signs_in(http: httpx.AsyncClient, topology: Topology) -> dict[str, Any]:
    """Through the gateway: a whole sign-in (registration, pages, code exchange), an API read."""
    reg, tokens = await code_flow(topology.base_url, topology.email, topology.password, SCOPE)
    courses = await http.get(
        f"{topology.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert courses.status_code == 200, courses.text
    return {"client_id": reg["client_id"], **tokens}


def _migrate_next_release(topology: Topology, folder: Path, log: Path) -> list[str]:
    """The next release's migration step, started twice at once (two pods' init steps)."""
    env = topology.services["authz"].env
    command = [sys.executable, str(NEXT_RELEASE), str(folder), "authz", "migrate"]
    with log.open("ab") as out:
        procs = [subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT) for _ in range(2)]
        codes = [proc.wait(timeout=60) for proc in procs]
    assert codes == [0, 0], log.read_text()[-3000:]
    return [line for line in log.read_text().splitlines() if "migration_applied" in line]


async def test_rolling_upgrade_side_by_side(topology: Topology, tmp_path: Path) -> None:
    old = topology.services["authz"]
    folder = _migrations_folder(tmp_path)
    new = NextRelease(
        name="authz-next",
        package="authz",
        port=free_port(),
        env=dict(old.env),
        log_path=tmp_path / "authz-next.log",
        cwd=tmp_path,
        folder=folder,
    )
    topology.services["authz-next"] = new  # its log in a failure's report; stopped with the others
    async with httpx.AsyncClient(timeout=15) as http:
        # 1. The current release serves; the database is at its newest migration.
        status, body = await _readyz(http, old.address)
        assert status == 200 and body["schema"] == {
            "service": "authz",
            "code": CURRENT,
            "database": CURRENT,
            "state": "current",
        }

        # 2. The next release starts before its migration: alive, not ready, and says why.
        new.start()

        async def alive() -> bool:
            try:
                return (await http.get(f"{new.address}/healthz")).status_code == 200
            except httpx.HTTPError:
                assert new.running(), new.tail()
                return False

        assert await _until(alive, 40), new.tail()
        for _ in range(3):  # it stays so, probe after probe, while the old release serves
            status, body = await _readyz(http, new.address)
            assert status == 503, body
            assert body["checks"]["postgres"] == "ok" and body["checks"]["redis"] == "ok", body
            assert body["checks"]["schema"].startswith("behind:"), body
            assert body["schema"] == {
                "service": "authz",
                "code": NEXT,
                "database": CURRENT,
                "state": "behind",
                "missing": [NEXT],
            }
            await _old_release_answers(http, topology)
        assert "schema_behind" in new.tail(20000), new.tail()  # its start-up line

        # A sign-in on the old release while the new one waits, before the migration.
        before = await _old_release_signs_in(http, topology)

        # 3. The next release's migration step: applied once, however many run it.
        applied = _migrate_next_release(topology, folder, tmp_path / "migrate.log")
        assert len(applied) == 1 and "rolling_upgrade_expansion" in applied[0], applied
        conn = await asyncpg.connect(topology.database_url)
        try:
            rows = await conn.fetch(
                "SELECT version FROM schema_migrations WHERE service = 'authz' AND version = $1", NEXT
            )
        finally:
            await conn.close()
        assert len(rows) == 1

        # 4. The new instance becomes ready; the old one stays ready (the database is ahead of it).
        async def new_ready() -> bool:
            return (await _readyz(http, new.address))[0] == 200

        assert await _until(new_ready, 20), (await _readyz(http, new.address), new.tail())
        status, body = await _readyz(http, new.address)
        assert body["schema"] == {"service": "authz", "code": NEXT, "database": NEXT, "state": "current"}, body
        status, body = await _readyz(http, old.address)
        assert status == 200 and body["schema"]["state"] == "ahead" and body["schema"]["database"] == NEXT, body

        # 5. Side by side on the expanded schema: the old release still signs people in,
        # a refresh token the old release issued before the migration is rotated by the new
        # one, whose successor the old one rotates again; the old resource API accepts the
        # new release's access token.
        await _old_release_signs_in(http, topology)
        client_id = before["client_id"]
        at_new = await _refresh(http, new.address, client_id, before["refresh_token"])
        at_old = await _refresh(http, old.address, client_id, at_new["refresh_token"])
        at_new_again = await _refresh(http, new.address, client_id, at_old["refresh_token"])
        for token in (at_new, at_old, at_new_again):
            courses = await http.get(
                f"{topology.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {token['access_token']}"}
            )
            assert courses.status_code == 200, courses.text
        registered = await http.post(f"{new.address}/api/oauth/register", json={"redirect_uris": [CALLBACK]})
        assert registered.status_code == 201, registered.text

    # 6. The old release goes (SIGTERM, as the rollout ends it) and exits cleanly.
    assert old.stop() == 0, old.tail()
    assert new.stop() == 0, new.tail()
