"""The admin command line builds administration only (components.AdminComponents): no
signing key is loaded, none is made. In a database no server has started on yet, adding
a school leaves the signing keys' table as empty as it was."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import asyncpg
import msgspec

from ..support.infra import temporary_database
from .admin_api import admin_cli


async def test_adding_a_school_loads_and_makes_no_signing_key(
    postgres_admin_url: str, migrated_template: str, redis_url: str, kek: str
) -> None:
    async with temporary_database(postgres_admin_url, template=migrated_template) as url:
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT count(*) FROM authz_signing_keys") == 0
            made = await asyncio.to_thread(
                admin_cli, url, redis_url, kek, "--json", "schools", "create", "--slug", "first", "--name", "First"
            )
            assert made.returncode == 0, made.stderr
            assert msgspec.json.decode(made.stdout)["slug"] == "first"
            assert await conn.fetchval("SELECT count(*) FROM authz_schools WHERE slug = 'first'") == 1
            # Loading the keys at start (what the servers do) would have made one of each kind.
            assert await conn.fetchval("SELECT count(*) FROM authz_signing_keys") == 0
        finally:
            await conn.close()


def test_the_admin_command_imports_no_web_layer() -> None:
    """`python -m courseschool.authz admin ...` starts a process per command: it imports
    neither the web framework nor the page templates (the servers' app, the /metrics
    route), which took a second of its start-up on a slow machine."""
    probe = (
        "import runpy, sys; sys.argv = ['courseschool.authz', 'admin', '--help']\n"
        "try:\n    runpy.run_module('courseschool.authz', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('litestar', 'jinja2'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", f"the admin command imported: {done.stderr[:300]}"
