"""Schools and users, in `authz_schools` and `authz_users`."""

from __future__ import annotations

import uuid

import asyncpg

from courseschool.common.secrets import digest

from ..passwords import NO_PASSWORD
from ..protocol.emails import canonical_email
from ..protocol.models import User

_FIELDS = ("id", "school_id", "email", "email_verified", "name", "preferred_username", "role", "disabled")


def user_columns(table: str = "", prefix: str = "") -> str:
    """The select list a `User` is read from; `table` qualifies the columns and `prefix`
    names them, for queries that join users to other rows (see `user_from`)."""
    t = f"{table}." if table else ""
    return (
        f"{t}id::text AS {prefix}id, {t}school_id::text AS {prefix}school_id, {t}email AS {prefix}email, "
        f"{t}email_verified AS {prefix}email_verified, {t}name AS {prefix}name, "
        f"{t}preferred_username AS {prefix}preferred_username, {t}role AS {prefix}role, "
        f"{t}disabled_at IS NOT NULL AS {prefix}disabled"
    )


def credential_version(password_hash: str) -> str:
    """What a sign-in waiting at its second step remembers of the password it accepted:
    a digest of its hash (salted: any new password, by reset or change, gives another)."""
    return digest(f"credential:{password_hash}").hex()[:32]


def user_from(row: asyncpg.Record, prefix: str = "") -> User:
    return User(**{name: row[prefix + name] for name in _FIELDS})


_COLUMNS = user_columns()

_GET = f"SELECT {_COLUMNS} FROM authz_users WHERE id = $1"
_GET_LOGIN = f"SELECT {_COLUMNS}, password_hash FROM authz_users WHERE email_canonical = $1"
_SET_PASSWORD_HASH = "UPDATE authz_users SET password_hash = $2 WHERE id = $1"
# A hash upgraded at sign-in replaces only the hash that was checked: a password set
# meanwhile (a reset, a change) stays.
_UPGRADE_PASSWORD_HASH = "UPDATE authz_users SET password_hash = $2 WHERE id = $1 AND password_hash = $3"
_PASSWORD_HASH = "SELECT password_hash FROM authz_users WHERE id = $1 AND disabled_at IS NULL"
_AWAITING_PASSWORD = "SELECT password_hash = $2 FROM authz_users WHERE id = $1"
_SCHOOL_NAME = "SELECT name FROM authz_schools WHERE id = $1"
_INSERT_SCHOOL = """
INSERT INTO authz_schools (id, slug, name) VALUES ($1, $2, $3)
ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name
RETURNING id::text
"""
_INSERT_USER = f"""
INSERT INTO authz_users (
    id, school_id, email, email_verified, name, preferred_username, role, password_hash, email_canonical
)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING {_COLUMNS}
"""


class PgUserStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, user_id: str) -> User | None:
        try:
            uid = uuid.UUID(user_id)
        except ValueError:
            return None
        row = await self._pool.fetchrow(_GET, uid)
        return user_from(row) if row else None

    async def get_for_login(self, email: str) -> tuple[User, str] | None:
        """The user an address names, by its canonical form (protocol/emails.py)."""
        row = await self._pool.fetchrow(_GET_LOGIN, canonical_email(email))
        if row is None:
            return None
        return user_from(row), row["password_hash"]

    async def set_password_hash(self, user_id: str, password_hash: str) -> None:
        await self._pool.execute(_SET_PASSWORD_HASH, uuid.UUID(user_id), password_hash)

    async def upgrade_password_hash(self, user_id: str, checked: str, upgraded: str) -> bool:
        """`upgraded` in place of `checked` (the same password, hashed at today's
        parameters) unless the password changed meanwhile; whether it was written."""
        done = await self._pool.execute(_UPGRADE_PASSWORD_HASH, uuid.UUID(user_id), upgraded, checked)
        return done == "UPDATE 1"

    async def credential(self, user_id: str) -> str | None:
        """The person's `credential_version` now; None: no such person, or disabled."""
        try:
            uid = uuid.UUID(user_id)
        except ValueError:
            return None
        password_hash = await self._pool.fetchval(_PASSWORD_HASH, uid)
        return credential_version(password_hash) if password_hash is not None else None

    async def awaiting_password(self, user_id: str) -> bool:
        """Invited, and no password chosen yet (passwords.NO_PASSWORD)."""
        return bool(await self._pool.fetchval(_AWAITING_PASSWORD, uuid.UUID(user_id), NO_PASSWORD))

    async def school_name(self, school_id: str) -> str | None:
        return await self._pool.fetchval(_SCHOOL_NAME, uuid.UUID(school_id))

    async def upsert_school(self, *, slug: str, name: str, school_id: uuid.UUID | None = None) -> str:
        return await self._pool.fetchval(_INSERT_SCHOOL, school_id or uuid.uuid4(), slug, name)

    async def create(
        self,
        *,
        school_id: str,
        email: str,
        name: str,
        preferred_username: str,
        role: str,
        password_hash: str,
        email_verified: bool = True,
        user_id: uuid.UUID | None = None,
    ) -> User:
        row = await self._pool.fetchrow(
            _INSERT_USER,
            user_id or uuid.uuid4(),
            uuid.UUID(school_id),
            email,
            email_verified,
            name,
            preferred_username,
            role,
            password_hash,
            canonical_email(email),
        )
        return user_from(row)
