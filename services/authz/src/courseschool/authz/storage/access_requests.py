"""People's requests for their school's approval of an app, in `authz_app_access_requests`
(migration 0024), and the e-mail they cause, in the mail outbox, written by the same
statement when SMTP_URL is set: a new request to each owner and admin of the school; a
decision (approved, declined, expired) to the person who asked.

A request is pending until decided or until `expires_at` (ACCESS_REQUEST_TTL after it
was made); a pending request past it counts as none, and housekeeping marks it expired
(`expire`) and tells its person. A person has at most one pending request per app. An
owner or admin who asks (their role's cap is the widest, yet the policy holds for them
too) is not e-mailed their own request."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

ACCESS_REQUESTED = "access_requested"
ACCESS_REQUEST_DECIDED = "access_request_decided"

_CLEAR_EXPIRED = """
UPDATE authz_app_access_requests SET decision = 'expired', decided_at = to_timestamp($4)
WHERE school_id = $1 AND user_id = $2 AND client_id = $3 AND decision IS NULL AND expires_at <= to_timestamp($4)
"""
_ASK = """
WITH request AS (
    INSERT INTO authz_app_access_requests
        (id, school_id, user_id, client_id, client_name, scope, reason, created_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8), to_timestamp($8) + make_interval(secs => $9))
    ON CONFLICT (school_id, user_id, client_id) WHERE decision IS NULL DO NOTHING
    RETURNING school_id, user_id, client_name, scope, reason
), mail AS (
    INSERT INTO authz_mail_outbox (kind, user_id, details, created_at)
    SELECT 'access_requested', steward.id,
           jsonb_build_object('client_name', r.client_name, 'verified_origin', $11::text, 'school_name', s.name,
                              'requester', u.name, 'requester_email', u.email, 'requester_role', u.role,
                              'reason', r.reason, 'scope', r.scope, 'at', $8::bigint),
           to_timestamp($8)
    FROM request r
    JOIN authz_users u ON u.id = r.user_id
    JOIN authz_schools s ON s.id = r.school_id
    JOIN authz_users steward ON steward.school_id = r.school_id AND steward.role IN ('owner', 'admin')
         AND steward.disabled_at IS NULL AND steward.id <> r.user_id
    WHERE $10
    RETURNING 1
)
SELECT (SELECT count(*) FROM request) AS made, (SELECT count(*) FROM mail) AS mailed
"""
_REQUEST_COLUMNS = """
r.id::text, r.client_id, COALESCE(c.client_name, r.client_name) AS client_name,
COALESCE(c.is_integration, false) AS is_integration, c.verified_origin,
r.user_id::text, u.name AS user_name, u.email AS user_email, u.role AS user_role, r.scope, r.reason,
extract(epoch FROM r.created_at)::bigint AS created_at, extract(epoch FROM r.expires_at)::bigint AS expires_at
"""
_PENDING_AT_SCHOOL = f"""
SELECT {_REQUEST_COLUMNS}
FROM authz_app_access_requests r
JOIN authz_users u ON u.id = r.user_id
LEFT JOIN authz_clients c ON c.client_id = r.client_id
WHERE r.school_id = $1 AND r.decision IS NULL AND r.expires_at > to_timestamp($2) AND ($3::uuid IS NULL OR r.id = $3)
ORDER BY r.created_at, r.id
"""
_PENDING_OF = """
SELECT extract(epoch FROM created_at)::bigint FROM authz_app_access_requests
WHERE school_id = $1 AND user_id = $2 AND client_id = $3 AND decision IS NULL AND expires_at > to_timestamp($4)
"""
# Decide pending requests (one by its id, or every one of an app an approval covers) and
# tell each person. `$1`: the school; `$2`: a request's id or NULL; `$3`: the app's client
# id or NULL; `$4`: the decision; `$5`: who; `$6`: the note; `$7`: now; `$8`: mail on;
# `$9`: for an approval of an app, the scopes it covers (NULL: every area).
_DECIDE = """
WITH decided AS (
    UPDATE authz_app_access_requests SET decision = $4, decided_at = to_timestamp($7), decided_by = $5, note = $6
    WHERE school_id = $1 AND decision IS NULL AND expires_at > to_timestamp($7)
      AND ($2::uuid IS NULL OR id = $2) AND ($3::text IS NULL OR client_id = $3)
      AND ($2::uuid IS NOT NULL OR $9::text IS NULL OR string_to_array(scope, ' ') <@ string_to_array($9, ' '))
    RETURNING id, school_id, user_id, client_id, client_name, scope
), mail AS (
    INSERT INTO authz_mail_outbox (kind, user_id, details, created_at)
    SELECT 'access_request_decided', d.user_id,
           jsonb_build_object('client_name', d.client_name, 'school_name', s.name, 'decision', $4::text,
                              'note', $6::text, 'scope', d.scope, 'at', $7::bigint),
           to_timestamp($7)
    FROM decided d JOIN authz_schools s ON s.id = d.school_id
    WHERE $8
)
SELECT id::text, user_id::text, client_id, client_name, scope FROM decided
"""
_EXPIRE = """
WITH gone AS (
    UPDATE authz_app_access_requests SET decision = 'expired', decided_at = to_timestamp($1)
    WHERE id IN (SELECT id FROM authz_app_access_requests WHERE decision IS NULL AND expires_at <= to_timestamp($1)
                 ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
    RETURNING school_id, user_id, client_name, scope
), mail AS (
    INSERT INTO authz_mail_outbox (kind, user_id, details, created_at)
    SELECT 'access_request_decided', g.user_id,
           jsonb_build_object('client_name', g.client_name, 'school_name', s.name, 'decision', 'expired',
                              'scope', g.scope, 'at', $1::bigint),
           to_timestamp($1)
    FROM gone g JOIN authz_schools s ON s.id = g.school_id
    WHERE $2
)
SELECT count(*) FROM gone
"""


class AccessRequest(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    client_id: str
    client_name: str | None
    is_integration: bool
    verified_origin: str | None
    user_id: str
    user_name: str
    user_email: str
    user_role: str
    scope: str
    reason: str
    created_at: int
    expires_at: int


class Decided(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    user_id: str
    client_id: str
    client_name: str | None
    scope: str


class PgAccessRequestStore:
    def __init__(self, pool: asyncpg.Pool, *, ttl: int, mail: bool) -> None:
        self._pool = pool
        self._ttl = ttl  # ACCESS_REQUEST_TTL: how long a request waits for a decision
        self._mail = mail  # SMTP_URL is set: the e-mail goes into the mail outbox too

    async def ask(
        self,
        *,
        school_id: str,
        user_id: str,
        client_id: str,
        client_name: str | None,
        verified_origin: str | None,
        scope: str,
        reason: str,
        now: int,
    ) -> bool:
        """Record a person's request (and e-mail the school's owners and admins); False
        when they have one pending for the app already."""
        school, user = uuid.UUID(school_id), uuid.UUID(user_id)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_CLEAR_EXPIRED, school, user, client_id, now)
            row = await conn.fetchrow(
                _ASK,
                uuid.uuid4(),
                school,
                user,
                client_id,
                client_name,
                scope,
                reason,
                now,
                self._ttl,
                self._mail,
                verified_origin,
            )
        return bool(row["made"])

    async def pending(self, school_id: str, *, now: int, request_id: str | None = None) -> list[AccessRequest]:
        """The school's pending requests, oldest first (only `request_id`'s, when named)."""
        rows = await self._pool.fetch(_PENDING_AT_SCHOOL, uuid.UUID(school_id), now, _uuid(request_id))
        return [AccessRequest(**dict(r)) for r in rows]

    async def pending_since(self, school_id: str, user_id: str, client_id: str, *, now: int) -> int | None:
        """When the person asked for the app, if their request is pending."""
        found = await self._pool.fetchval(_PENDING_OF, uuid.UUID(school_id), uuid.UUID(user_id), client_id, now)
        return int(found) if found is not None else None

    async def decide(
        self,
        school_id: str,
        *,
        request_id: str | None,
        client_id: str | None,
        decision: str,
        by: str,
        note: str | None,
        now: int,
        covers: str | None = None,
    ) -> list[Decided]:
        """Decide a request by its id, or (`client_id`, `covers`) every pending request of
        an app an approval covers; each person is told. The requests decided."""
        rows = await self._pool.fetch(
            _DECIDE,
            uuid.UUID(school_id),
            _uuid(request_id),
            client_id,
            decision,
            uuid.UUID(by),
            note,
            now,
            self._mail,
            covers,
        )
        return [Decided(**dict(r)) for r in rows]

    async def expire(self, *, now: int, batch: int = 500) -> int:
        """Mark requests past their time expired, and tell their people; how many."""
        return int(await self._pool.fetchval(_EXPIRE, now, self._mail, batch))


def _uuid(value: str | None) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return uuid.UUID(int=0)  # names no request
