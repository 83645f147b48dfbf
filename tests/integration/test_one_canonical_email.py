"""Security review, finding 6: one normalisation of emails everywhere. A sign-in's
lockout key and the user it finds come from the same canonical form, so no spelling
of a locked address reaches the account, and no spelling finds another user. The
users table keeps the form in a unique column (migration 0007), filled for existing
rows exactly as the application computes it, or refused clearly."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from courseschool.authz.app import MIGRATIONS, create_app
from courseschool.authz.protocol.emails import canonical_email
from courseschool.common.db import migrate

from ..support.infra import temporary_database
from .conftest import serve
from .flow import Flow
from .sign_in import signed_in, try_sign_in, with_settings

VICTIM = "victim@example.test"
SAME_ACCOUNT = [
    "VICTIM@EXAMPLE.TEST",
    "Victim@Example.Test",
    "\uff56\uff49\uff43\uff54\uff49\uff4d@example.test",  # fullwidth
    "VICTIM\uff20EXAMPLE.TEST",  # fullwidth commercial at
]
LOOK_ALIKES = ["v\u0130ctim@example.test", "V\u0130CTIM@EXAMPLE.TEST", "v\u0131ctim@example.test"]
ADMIN_TOKEN = "admin-token-for-tests-0123456789abcdef"


@pytest.fixture
async def three_strikes(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    settings = with_settings(authz_settings, login_lockout_threshold=3, admin_token=ADMIN_TOKEN)
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def _lock_out(flow: Flow, reg: dict) -> None:
    for n in range(3):
        assert (await try_sign_in(flow, reg, VICTIM, f"guess {n}")).status_code == 303
    assert (await try_sign_in(flow, reg, VICTIM, "guess")).status_code == 429


@pytest.mark.parametrize("variant", SAME_ACCOUNT)
async def test_every_spelling_of_a_locked_address_is_locked(three_strikes: Flow, variant: str) -> None:
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user(email=VICTIM)
    await _lock_out(flow, reg)
    answer = await try_sign_in(flow, reg, variant, victim["password"])
    assert answer.status_code == 429
    assert await flow.count("authz_login_sessions") == 0


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
async def test_a_dotted_capital_i_does_not_reach_the_locked_user(three_strikes: Flow, look_alike: str) -> None:
    """`vİctim@…` (U+0130) signed in while `victim@…` was locked: PostgreSQL's lower()
    found the user, Python's lower() keyed the lock elsewhere. Now it names another
    address: it finds no user, so even the victim's password signs no one in."""
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user(email=VICTIM)
    await _lock_out(flow, reg)
    answer = await try_sign_in(flow, reg, look_alike, victim["password"])
    assert not signed_in(answer)
    assert await flow.count("authz_login_sessions") == 0
    assert await flow.users.get_for_login(look_alike) is None


async def test_a_variant_finds_the_user_and_signs_in_when_not_locked(three_strikes: Flow) -> None:
    flow = three_strikes
    reg = await flow.register()
    victim = await flow.user(email="Victim@Example.Test")
    found = await flow.users.get_for_login("\uff56\uff49\uff43\uff54\uff49\uff4d@EXAMPLE.test")
    assert found is not None and found[0].id == victim["id"]
    assert signed_in(await try_sign_in(flow, reg, "VICTIM@example.TEST", victim["password"]))


async def test_the_admin_finds_and_refuses_by_the_canonical_email(three_strikes: Flow) -> None:
    flow = three_strikes
    victim = await flow.user(email=VICTIM)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    shown = await flow.client.get("/internal/admin/users/\uff36ICTIM@example.test", headers=admin)
    assert shown.status_code == 200 and shown.json()["id"] == victim["id"]
    twin = {"school": "acme", "email": "\uff36ICTIM@Example.test", "name": "Twin", "role": "student"}
    refused = await flow.client.post("/internal/admin/users", json=twin, headers=admin)
    assert refused.status_code == 409
    assert await flow.count("authz_users") == 1
    with pytest.raises(asyncpg.UniqueViolationError):  # and the database says so too
        await flow.user(email="Victim@EXAMPLE.test", school=victim["school_id"])
    look_alike = {**twin, "email": "v\u0130ctim@example.test"}  # another address: may be created
    assert (await flow.client.post("/internal/admin/users", json=look_alike, headers=admin)).status_code == 201


# -- migration 0007 over existing rows ---------------------------------------------------


@pytest.fixture
async def before_0007(postgres_admin_url: str, tmp_path: Path) -> AsyncIterator[tuple[asyncpg.Connection, Path]]:
    """A database migrated up to (not including) 0007, and the folder to add it to."""
    for path in sorted(MIGRATIONS.glob("*.sql")):
        if int(path.name[:4]) < 7:
            shutil.copy(path, tmp_path / path.name)
    async with temporary_database(postgres_admin_url) as url:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn, "authz", tmp_path)
            school = uuid.uuid4()
            await conn.execute("INSERT INTO authz_schools (id, slug, name) VALUES ($1, 'old', 'Old')", school)
            yield conn, tmp_path
        finally:
            await conn.close()


async def _add_user(conn: asyncpg.Connection, email: str) -> None:
    await conn.execute(
        """INSERT INTO authz_users (id, school_id, email, name, preferred_username, role, password_hash)
        SELECT $1, id, $2, 'Old', 'old', 'student', 'x' FROM authz_schools""",
        uuid.uuid4(),
        email,
    )


def _with_0007(folder: Path) -> None:
    shutil.copy(MIGRATIONS / "0007_canonical_email.sql", folder / "0007_canonical_email.sql")


async def test_migration_fills_existing_rows_as_the_application_computes(before_0007) -> None:
    conn, folder = before_0007
    ascii_printable = "".join(chr(c) for c in range(0x21, 0x7F))
    emails = ["Victim@Example.TEST", "owner@acme.test", ascii_printable, "MiXeD.Case+Tag@Sub.Example.COM"]
    for email in emails:
        await _add_user(conn, email)
    _with_0007(folder)
    assert await migrate(conn, "authz", folder) == ["0007_canonical_email"]
    rows = await conn.fetch("SELECT email, email_canonical FROM authz_users")
    assert {r["email"]: r["email_canonical"] for r in rows} == {e: canonical_email(e) for e in emails}


async def test_migration_refuses_an_email_sql_cannot_canonicalise(before_0007) -> None:
    conn, folder = before_0007
    await _add_user(conn, "stra\u00dfe@example.test")
    _with_0007(folder)
    with pytest.raises(asyncpg.RaiseError, match="non-ASCII"):
        await migrate(conn, "authz", folder)
    assert await conn.fetchval("SELECT max(version) FROM schema_migrations WHERE service = 'authz'") < 7


async def test_migration_refuses_two_users_with_one_canonical_email(before_0007) -> None:
    """Under the old index (PostgreSQL's lower() in the database's locale) two spellings
    could have been two users; the migration names them rather than merge or fail obscurely."""
    conn, folder = before_0007
    await conn.execute("DROP INDEX authz_users_email")  # as a locale whose lower() differs would have allowed
    await _add_user(conn, "twin@example.test")
    await _add_user(conn, "TWIN@example.test")
    _with_0007(folder)
    with pytest.raises(asyncpg.RaiseError, match=r"share the email twin@example\.test"):
        await migrate(conn, "authz", folder)
