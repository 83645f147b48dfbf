"""What no request needs any more, removed in bounded batches (the housekeeping job in
maintenance.py), so that no table grows with the traffic it has served:

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
- sign-in sessions a day past their end or expiry;
- notices of new connections 30 days old, seen or not;
- the mail outbox's messages 30 days old, sent or not, and at once a link's message
  never sent before its link expired (its sealed token with it);
- e-mailed links (invitations, password resets) a day past their expiry;
- the mail outbox's messages 30 days old, sent or not;
- people's requests for their school's approval of an app 30 days after their decision
  or expiry (maintenance.py marks expired ones first);
- events (`authz_events`) older than EVENT_RETENTION;
- authenticator apps begun and never confirmed, an hour old (a new set-up makes a new
  secret after a few minutes anyway: second_factors.begin_totp).

Each rule deletes at most `batch` rows per statement and runs at most `rounds`
statements per pass (HOUSEKEEPING_BATCH, HOUSEKEEPING_ROUNDS); rows locked by a request
or another replica's pass are skipped (courseschool.common.housekeeping, which the
resource API's activity retention uses too).
"""

from __future__ import annotations

from typing import NamedTuple

import asyncpg
import msgspec

from courseschool.common.clock import Clock, SystemClock
from courseschool.common.housekeeping import SweepRule, sweep

from ..settings import AuthzSettings


class Rule(NamedTuple):
    table: str
    key: str  # the primary key
    condition: str  # what may go; $2 is the application's time, $3 the lifetime named below, in seconds
    lifetime: str | None = None  # a field of `Lifetimes`


# Every condition compares with the application's clock ($2, `courseschool.common.clock`),
# the clock that recorded the moments it reads (docs/design.md, "One clock").
_NOW = "to_timestamp($2)"
_RULES: dict[str, Rule] = {
    "codes": Rule("authz_codes", "code_hash", f"expires_at < {_NOW} - interval '1 day'"),
    "refresh_tokens": Rule(
        "authz_refresh_tokens", "token_hash", f"created_at < {_NOW} - make_interval(secs => $3)", "refresh_idle"
    ),
    "revoked_access_tokens": Rule("authz_revoked_access_tokens", "jti", f"expires_at < {_NOW} - interval '5 minutes'"),
    "revoked_grants": Rule(
        "authz_grants", "id", f"revoked_at < {_NOW} - make_interval(secs => $3)", "revoked_grant_retention"
    ),
    "spent_grants": Rule(
        "authz_grants", "id", f"created_at < {_NOW} - make_interval(secs => $3) - interval '1 day'", "refresh_absolute"
    ),
    "sessions": Rule(
        "authz_login_sessions",
        "id_hash",
        f"expires_at < {_NOW} - interval '1 day' OR ended_at < {_NOW} - interval '1 day'",
    ),
    "notices": Rule("authz_notices", "id", f"created_at < {_NOW} - interval '30 days'"),
    "mail": Rule("authz_mail_outbox", "id", f"created_at < {_NOW} - interval '30 days'"),
    # A link's message never sent before the link expired: its sealed token goes with it.
    "mail_links": Rule("authz_mail_outbox", "id", f"sealed IS NOT NULL AND expires_at <= {_NOW}"),
    "account_links": Rule("authz_account_links", "token_hash", f"expires_at < {_NOW} - interval '1 day'"),
    "access_requests": Rule("authz_app_access_requests", "id", f"decided_at < {_NOW} - interval '30 days'"),
    "unconfirmed_totp": Rule(
        "authz_totp", "user_id", f"confirmed_at IS NULL AND created_at < {_NOW} - interval '1 hour'"
    ),
    "events": Rule("authz_events", "id", f"at < {_NOW} - make_interval(secs => $3)", "event_retention"),
}


class Lifetimes(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds: the refresh token's idle and absolute lifetimes, how long a revoked grant
    stays on record, and how long an event does."""

    refresh_idle: int
    refresh_absolute: int
    revoked_grant_retention: int
    event_retention: int = 365 * 86400


class PgHousekeeping:
    def __init__(
        self,
        pool: asyncpg.Pool,
        lifetimes: Lifetimes,
        *,
        clock: Clock | None = None,
        batch: int,
        rounds: int,
    ) -> None:
        self._pool = pool
        self._lifetimes = lifetimes
        self._clock = clock or SystemClock()
        self._batch = batch
        self._rounds = rounds

    @classmethod
    def configured(cls, settings: AuthzSettings, pool: asyncpg.Pool, clock: Clock) -> PgHousekeeping:
        """Housekeeping with the lifetimes, batch and rounds the settings name."""
        lifetimes = Lifetimes(
            refresh_idle=settings.refresh_token_idle_ttl,
            refresh_absolute=settings.refresh_token_absolute_ttl,
            revoked_grant_retention=settings.revoked_grant_retention,
            event_retention=settings.event_retention,
        )
        return cls(pool, lifetimes, clock=clock, batch=settings.housekeeping_batch, rounds=settings.housekeeping_rounds)

    async def sweep(self) -> dict[str, int]:
        """One pass over every rule: rows removed (or cleared) per rule."""
        rules = {name: SweepRule(rule.table, rule.key, rule.condition) for name, rule in _RULES.items()}
        now = float(self._clock.now())
        arguments = {
            name: (now,) if rule.lifetime is None else (now, float(getattr(self._lifetimes, rule.lifetime)))
            for name, rule in _RULES.items()
        }
        return await sweep(self._pool, rules, arguments, batch=self._batch, rounds=self._rounds)
