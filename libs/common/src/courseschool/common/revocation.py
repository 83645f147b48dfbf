"""The revocation feed shared by the authorization server (publisher) and the
resource servers (subscribers): key names, the message on the channel, and the record
in PostgreSQL that a resource server catches up from.

Redis may lose a message (a refused write, a dropped connection, a publisher that died
between its commit and its publish), so the channel alone bounds nothing. Every
revocation is in PostgreSQL first (`authz_grants.revoked_at`,
`authz_revoked_access_tokens.revoked_at`, stamped by the application's clock), and each
resource server reads what was revoked since its last look every `CATCH_UP_EVERY`
seconds; a resource server that could not look for `FANOUT_BOUND` seconds trusts nothing
in memory (it introspects). So a revocation reaches every resource server within
`FANOUT_BOUND` seconds, whatever Redis does (docs/design.md)."""

from __future__ import annotations

import msgspec

CHANNEL = "courseschool:revocations"

CATCH_UP_EVERY = 1.0  # seconds between two looks at the record
FANOUT_BOUND = 3.0  # seconds a resource server trusts its memory without a look that succeeded
# How far back a look reaches before the previous one began: the revocation's statement
# may commit after the look that began before it, and the authorization server's clock
# may be behind the resource server's.
CATCH_UP_OVERLAP = 60

# Owned by the authorization server (its tables), read by the resource servers, which
# share its database. Indexed by `revoked_at` (migrations 0012 and 0019).
REVOKED_SINCE = """
SELECT 'grant' AS kind, id::text AS value FROM authz_grants WHERE revoked_at > to_timestamp($1)
UNION ALL
SELECT 'jti', jti FROM authz_revoked_access_tokens WHERE revoked_at > to_timestamp($1)
"""


class RevocationEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    grant_id: str | None = None
    jti: str | None = None


def grant_key(grant_id: str) -> str:
    return f"revoked:grant:{grant_id}"


def jti_key(jti: str) -> str:
    return f"revoked:jti:{jti}"
