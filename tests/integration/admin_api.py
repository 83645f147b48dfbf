"""The internal admin API as the tests call it: its credential and two small helpers.
The `admin_flow` fixture (an authz app with ADMIN_TOKEN set) is in conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import httpx
import msgspec

from courseschool.authz.settings import AuthzSettings

ADMIN_TOKEN = "admin-token-for-tests-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def with_admin(base: AuthzSettings) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(base), "admin_token": ADMIN_TOKEN})


async def admin_post(client: httpx.AsyncClient, path: str, body: dict | None = None) -> dict:
    response = await client.post(f"/internal/admin{path}", json=body or {}, headers=ADMIN)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def admin_get(client: httpx.AsyncClient, path: str) -> Any:
    response = await client.get(f"/internal/admin{path}", headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()


def admin_cli(
    database_url: str,
    redis_url: str,
    kek: str,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m courseschool.authz admin ARGS` against these servers; `env` adds
    settings (None: removes one)."""
    environ = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "KEY_ENCRYPTION_KEY": kek}
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return subprocess.run(
        [sys.executable, "-m", "courseschool.authz", "admin", *args],
        env=environ,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
