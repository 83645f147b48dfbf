"""What no request needs any more, removed in bounded batches (the housekeeping job in
endpoints/maintenance.py), so that no table grows with the traffic it has served:

- authorization codes a day past their expiry (a reused code still revokes its grant
  for that day; after it, the code is unknown);
- refresh tokens older than the idle lifetime: such a token is refused as expired
  before its use is even looked at, so it neither grants nor detects anything
  (a consumed one younger than that stays: presenting it again revokes its grant,
  RFC 9700 §4.14.2);
- revoked access-token ids five minutes past the token's expiry (the revocation feed
  reads them until then);
- grants revoked longer ago than REVOKED_GRANT_RETENTION, and grants a day older than
  the refresh token's absolute lifetime (nothing they issued can still be used); their
  codes and refresh tokens go with them;
- sign-in sessions a day past their end or expiry.

Each rule deletes at most `batch` rows per statement and runs at most `rounds`
statements per pass; rows locked by a request or another replica's pass are skipped.
"""

from __future__ import annotations

import asyncpg
import msgspec

# name -> (statement, the lifetime its $2 is, if any): $1 is always the batch size.
_RULES: dict[str, tuple[str, str | None]] = {
    "codes": (
        """
DELETE FROM authz_codes WHERE code_hash IN (
    SELECT code_hash FROM authz_codes WHERE expires_at < now() - interval '1 day'
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        None,
    ),
    "refresh_tokens": (
        """
DELETE FROM authz_refresh_tokens WHERE token_hash IN (
    SELECT token_hash FROM authz_refresh_tokens WHERE created_at < now() - make_interval(secs => $2)
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        "refresh_idle",
    ),
    "revoked_access_tokens": (
        """
DELETE FROM authz_revoked_access_tokens WHERE jti IN (
    SELECT jti FROM authz_revoked_access_tokens WHERE expires_at < now() - interval '5 minutes'
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        None,
    ),
    "revoked_grants": (
        """
DELETE FROM authz_grants WHERE id IN (
    SELECT id FROM authz_grants WHERE revoked_at < now() - make_interval(secs => $2)
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        "revoked_grant_retention",
    ),
    "spent_grants": (
        """
DELETE FROM authz_grants WHERE id IN (
    SELECT id FROM authz_grants WHERE created_at < now() - make_interval(secs => $2) - interval '1 day'
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        "refresh_absolute",
    ),
    "sessions": (
        """
DELETE FROM authz_login_sessions WHERE id_hash IN (
    SELECT id_hash FROM authz_login_sessions
    WHERE expires_at < now() - interval '1 day' OR ended_at < now() - interval '1 day'
    LIMIT $1 FOR UPDATE SKIP LOCKED)""",
        None,
    ),
}


class Lifetimes(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds: the refresh token's idle and absolute lifetimes, and how long a revoked
    grant stays on record."""

    refresh_idle: int
    refresh_absolute: int
    revoked_grant_retention: int


class PgHousekeeping:
    def __init__(self, pool: asyncpg.Pool, lifetimes: Lifetimes, *, batch: int = 5000, rounds: int = 10) -> None:
        self._pool = pool
        self._lifetimes = lifetimes
        self._batch = batch
        self._rounds = rounds

    async def sweep(self) -> dict[str, int]:
        """One pass over every rule: rows removed (or cleared) per rule."""
        done: dict[str, int] = {}
        for name, (statement, lifetime) in _RULES.items():
            args: tuple[object, ...] = (self._batch,)
            if lifetime is not None:
                args += (float(getattr(self._lifetimes, lifetime)),)
            done[name] = 0
            for _ in range(self._rounds):
                status = await self._pool.execute(statement, *args)
                count = int(status.rsplit(" ", 1)[1])
                done[name] += count
                if count < self._batch:
                    break
        return done
