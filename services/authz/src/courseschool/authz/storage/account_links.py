"""Single-use links by e-mail, `authz_account_links`: an invitation (the person chooses
their first password) and a password reset ("Forgot your password?").

Only the digest of a link's token is stored. The token itself is needed once more, by
the message that carries it, which the outbox builds when it sends it: it waits there
sealed under the key-encryption key (`sealed`), cleared once the relay took the
message, and the message is never sent after the link expired (housekeeping removes
it). A link and its message are written by one statement, which finds the person by
id or by address: for an address nobody has, the same statement runs and writes
nothing (the "Forgot your password?" page does the same work either way).

A new link supersedes the person's earlier unused links of the same purpose (they
expire now). Spending a link is atomic with the new password: the link is used only
if it is unused and unexpired, and then the password is set in the same transaction.
Times are the application's clock's."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import msgspec

from courseschool.common.jose import KeyEncryptor
from courseschool.common.secrets import digest, new_token

from ..protocol.emails import canonical_email
from .mail_outbox import INVITATION, PASSWORD_RESET

PURPOSES = (INVITATION, PASSWORD_RESET)
_AAD = "courseschool mail link:"  # the sealed token's associated data, with the message's kind

_ISSUE = """
WITH u AS (
    SELECT u.id, s.name AS school_name FROM authz_users u JOIN authz_schools s ON s.id = u.school_id
    WHERE (u.id = $1::uuid OR u.email_canonical = $2) AND u.disabled_at IS NULL
), superseded AS (
    UPDATE authz_account_links l SET expires_at = least(l.expires_at, to_timestamp($5))
    FROM u WHERE l.user_id = u.id AND l.purpose = $4 AND l.used_at IS NULL
), link AS (
    INSERT INTO authz_account_links (token_hash, user_id, purpose, created_at, expires_at)
    SELECT $3, u.id, $4, to_timestamp($5), to_timestamp($6) FROM u
    RETURNING user_id
)
INSERT INTO authz_mail_outbox (kind, user_id, details, created_at, sealed, expires_at)
SELECT $4, u.id, jsonb_build_object('school_name', u.school_name, 'at', $5::bigint, 'expires_at', $6::bigint),
       to_timestamp($5), $7, to_timestamp($6)
FROM u JOIN link ON link.user_id = u.id
RETURNING user_id::text
"""
_PEEK = """
SELECT l.user_id::text, l.purpose, extract(epoch FROM l.expires_at)::bigint AS expires_at,
       l.used_at IS NOT NULL AS used, u.email, u.disabled_at IS NOT NULL AS disabled
FROM authz_account_links l JOIN authz_users u ON u.id = l.user_id
WHERE l.token_hash = $1
"""
_SPEND = """
UPDATE authz_account_links SET used_at = to_timestamp($2)
WHERE token_hash = $1 AND user_id = $3::uuid AND used_at IS NULL AND expires_at > to_timestamp($2)
RETURNING purpose
"""
# A school's invitations still usable (a superseded link expired when the next was issued).
_PENDING = """
SELECT u.id::text AS user_id, u.email, u.name, u.role, extract(epoch FROM l.created_at)::bigint AS sent_at,
       extract(epoch FROM l.expires_at)::bigint AS expires_at
FROM authz_account_links l JOIN authz_users u ON u.id = l.user_id
WHERE u.school_id = $1::uuid AND l.purpose = 'invitation' AND l.used_at IS NULL
  AND l.expires_at > to_timestamp($2) AND u.disabled_at IS NULL
ORDER BY l.created_at DESC, u.email LIMIT $3
"""
_SET_PASSWORD = "UPDATE authz_users SET password_hash = $2 WHERE id = $1::uuid AND disabled_at IS NULL"
# The message of a link now spent, if it still waits: never sent.
_DROP_UNSENT = """
DELETE FROM authz_mail_outbox WHERE user_id = $1::uuid AND kind = $2 AND sealed IS NOT NULL AND sent_at IS NULL
"""


class Link(msgspec.Struct, frozen=True, kw_only=True):
    """What a link's token names, as its page needs it."""

    user_id: str
    email: str
    purpose: str
    expires_at: int
    used: bool
    disabled: bool

    def usable(self, now: int) -> bool:
        return not self.used and not self.disabled and now < self.expires_at


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """An invitation not taken up yet, as the school's people page lists it."""

    user_id: str
    email: str
    name: str
    role: str
    sent_at: int
    expires_at: int


def seal_aad(kind: str) -> str:
    return _AAD + kind


class PgAccountLinkStore:
    def __init__(self, pool: asyncpg.Pool, encryptor: KeyEncryptor) -> None:
        self._pool = pool
        self._encryptor = encryptor  # seals the token for its message (opened by mail/delivery.py)

    async def issue(
        self, purpose: str, *, now: int, ttl: int, user_id: str | None = None, email: str | None = None
    ) -> str | None:
        """A new link for the person `user_id` or `email` names (not disabled), and its
        message queued; the person's id, or None when nobody has that address (the same
        statement ran, and wrote nothing)."""
        assert purpose in PURPOSES
        token = new_token()
        sealed = self._encryptor.seal(seal_aad(purpose), {"token": token})
        uid = uuid.UUID(user_id) if user_id else None
        address = canonical_email(email) if email else None
        return await self._pool.fetchval(_ISSUE, uid, address, digest(token), purpose, now, now + ttl, sealed)

    async def find(self, token: str) -> Link | None:
        """The link `token` is (used, expired or not); None: no such link."""
        if not token or len(token) > 128:
            return None
        row = await self._pool.fetchrow(_PEEK, digest(token))
        return Link(**dict(row)) if row else None

    async def pending_invitations(self, school_id: str, *, now: int, limit: int = 100) -> list[Pending]:
        """The school's invitations still usable at `now`, the newest first."""
        rows = await self._pool.fetch(_PENDING, school_id, now, limit)
        return [Pending(**dict(r)) for r in rows]

    async def spend(self, token: str, *, user_id: str, password_hash: str, now: int) -> str | None:
        """Use the link once and set the person's new password, in one transaction; its
        purpose, or None when it was used, expired or is another person's (nothing changed)."""
        async with self._pool.acquire() as conn, conn.transaction():
            purpose = await conn.fetchval(_SPEND, digest(token), now, user_id)
            if purpose is None:
                return None
            await conn.execute(_SET_PASSWORD, user_id, password_hash)
            await conn.execute(_DROP_UNSENT, user_id, purpose)
        return str(purpose)


def opened(encryptor: KeyEncryptor, kind: str, sealed: bytes | None) -> dict[str, Any]:
    """What a message's sealed part holds ({} when none)."""
    return encryptor.open(seal_aad(kind), sealed) if sealed else {}
