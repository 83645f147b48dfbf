"""Fixtures shared by every test: a real Postgres database and a real Redis.

With pytest-xdist (`make test` runs it) each worker is a session of its own with its
own database and Redis database (tests/support/infra.py). The migrations run once per run and
server: into a template database that every worker's database is copied from."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from courseschool.common.db import migrate
from courseschool.common.jose import new_kek
from courseschool.platform.migrate import MIGRATIONS

from .support.infra import fresh_database_name, postgres_server, redis_server, temporary_database, with_database

TEMPLATES = "migrated-templates.json"  # in the run's shared folder: admin URL -> template database

# argon2id at the floor the settings accept (settings.py: OWASP's two passes over 19 MiB,
# one lane) for the apps and the processes the tests start: a fifth of the default's work
# for every sign-in and every person made (150 ms of CPU each at the default, thousands of
# times a run). The defaults have tests of their own (tests/unit/test_password_cost_settings.py),
# and the container tier runs the shipped image as configured, with them.
PASSWORD_COST = {"password_time_cost": 2, "password_memory_kib": 19456, "password_parallelism": 1}
for _name, _value in PASSWORD_COST.items():
    os.environ.setdefault(_name.upper(), str(_value))

# Emptied before each test (clean_db), children before parents; with the tables that
# reference them (consents, notices, the mail outbox, school blocks, the webhook outbox). Signing keys
# persist across tests: they are configuration, and slow to make.
TABLES = (
    "authz_refresh_tokens",
    "authz_codes",
    "authz_mail_outbox",
    "authz_notices",
    "authz_consents",
    "authz_revoked_access_tokens",
    "authz_grants",
    "authz_login_sessions",
    "authz_clients",
    "authz_trusted_domains",
    "authz_webhook_outbox",
    "authz_events",
    "authz_school_block_keys",
    "authz_school_blocks",
    "authz_school_two_step",
    "authz_passkeys",
    "authz_app_access_requests",
    "authz_school_app_approvals",
    "authz_school_app_policies",
    "authz_recovery_codes",
    "authz_totp",
    "authz_account_links",
    "authz_users",
    "authz_schools",
    "api_activity_changes",
    "api_activity_reads",
    "api_files",
    "api_singletons",
    "api_items",
    "api_schools",
)
# One DELETE per table, in one transaction: on tables as small as a test leaves them, a
# millisecond, where TRUNCATE (new files for every table and index) takes a few hundred.
EMPTY_TABLES = "; ".join(f"DELETE FROM {table}" for table in TABLES)


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands that keep a log in the user's state folder (the admin CLI) keep it in the
    session's temporary folder, not in the home of whoever runs the tests."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


def _run_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every process of this run sees: the base temporary folder, whose
    sub-folders are the xdist workers' own (popen-gwN)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
async def migrated_template(postgres_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database with every service's migrations, made by the first worker that needs
    it (the others wait on a file lock, then copy it): named in the run's folder, never
    connected to once made (a template must not be), dropped when the run ends
    (pytest_sessionfinish below)."""
    folder = _run_folder(tmp_path_factory)
    record = folder / TEMPLATES
    with (folder / (TEMPLATES + ".lock")).open("a") as lock:
        await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)  # waiting holds up no event loop
        return await _template_of(postgres_admin_url, record)  # the lock goes with the file


async def _template_of(postgres_admin_url: str, record: Path) -> str:
    """The template made on this server in this run, made now if none is."""
    made: dict[str, str] = json.loads(record.read_text()) if record.exists() else {}
    if postgres_admin_url in made:
        return made[postgres_admin_url]
    name = fresh_database_name("cs_template")
    admin = await asyncpg.connect(postgres_admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    made[postgres_admin_url] = name
    record.write_text(json.dumps(made))  # before migrating: a failure still leaves it to drop
    conn = await asyncpg.connect(with_database(postgres_admin_url, name))
    try:
        for service, directory in MIGRATIONS:
            await migrate(conn, service, directory)
    finally:
        await conn.close()
    return name


@pytest.fixture(scope="session")
async def database_url(postgres_admin_url: str, migrated_template: str) -> AsyncIterator[str]:
    """A database of this test session's own, migrated (a copy of the template),
    dropped at the end."""
    async with temporary_database(postgres_admin_url, template=migrated_template) as url:
        yield url


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's end (in xdist's controller, after every worker): drop the templates made
    on servers that outlive the run. Embedded servers and containers were a worker's own
    and are gone with it. A worker hands the paths its servers took to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from .support.infra import PATHS_TAKEN

        workeroutput["paths_taken"] = json.dumps(PATHS_TAKEN)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    record = _run_folder(session.config._tmp_path_factory) / TEMPLATES  # type: ignore[attr-defined]
    server = os.environ.get("TEST_DATABASE_URL")
    if not server or not record.exists():
        return
    name = json.loads(record.read_text()).get(server)
    if name:
        loop = asyncio.new_event_loop()  # pytest-asyncio's loops are left alone
        try:
            loop.run_until_complete(_drop(server, name))
        finally:
            loop.close()


async def _drop(admin_url: str, name: str) -> None:
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="session")
async def db_pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    from courseschool.common.db import create_pool

    pool = await create_pool(database_url, min_size=1, max_size=4)
    # What TRUNCATE ... CASCADE would also have emptied must be in TABLES: a table that
    # references one of them (a later migration's) is named here until it is added.
    referencing = await pool.fetch(
        """SELECT DISTINCT conrelid::regclass::text AS child FROM pg_constraint
           WHERE contype = 'f' AND confrelid::regclass::text = ANY($1::text[])""",
        list(TABLES),
    )
    missing = sorted({row["child"] for row in referencing} - set(TABLES))
    assert not missing, f"tests/conftest.py TABLES must list {missing} (they reference tables it empties)"
    yield pool
    await pool.close()


@pytest.fixture
async def clean_db(db_pool: asyncpg.Pool) -> asyncpg.Pool:
    """Each test starts from empty tables."""
    await db_pool.execute(EMPTY_TABLES)
    return db_pool


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def kek() -> str:
    return new_kek()


def pytest_report_header(config: pytest.Config) -> list[str]:
    forced = os.environ.get("TEST_SERVERS")
    default = f"TEST_SERVERS={forced}" if forced else "containers of locally built images, else embedded"
    chosen = [
        f"{what}: {'the server of ' + name if os.environ.get(name) else default}"
        for what, name in (("PostgreSQL", "TEST_DATABASE_URL"), ("Redis", "TEST_REDIS_URL"))
    ]
    return ["test servers: " + "; ".join(chosen) + " (the path taken is in the summary)"]


# Under xdist the fixtures run in the workers: each hands its paths to the controller.
_WORKERS_PATHS: dict[str, dict[str, list[str]]] = {}


def pytest_testnodedown(node: Any, error: Any) -> None:
    taken = json.loads(getattr(node, "workeroutput", {}).get("paths_taken", "{}"))
    worker = getattr(node, "gateway", None)
    for what, path in taken.items():
        _WORKERS_PATHS.setdefault(what, {}).setdefault(path, []).append(getattr(worker, "id", "?"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which path each test server (and the container tier's image) took, and why: this
    process's own, or each path the xdist workers took and which took it."""
    from .support.infra import PATHS_TAKEN

    lines = [f"{what}: {path}" for what, path in PATHS_TAKEN.items()]
    for what, paths in _WORKERS_PATHS.items():
        for path, workers in paths.items():
            lines.append(f"{what}: {path} [{', '.join(sorted(workers))}]")
    if lines:
        terminalreporter.section("test servers and containers")
        for line in lines:
            terminalreporter.write_line(line)
