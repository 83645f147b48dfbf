"""A school's app policy and the apps it approved (`protocol/school_policy.py`), in
`authz_school_app_policies` and `authz_school_app_approvals` (migration 0024).

An approval is keyed by the school and one client id: a metadata document's URL, an
integration's id, a self-registered client's own registration. Nothing else (a name, an
origin) is looked up, so another registration that calls itself the same is not covered."""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from ..protocol.school_policy import Policy, Standing

# The check where a grant is made and where a token is issued: two primary-key lookups.
_STANDING = """
SELECT COALESCE((SELECT policy FROM authz_school_app_policies WHERE school_id = $1), 'anyone') AS policy,
       a.client_id IS NOT NULL AS approved, a.scope
FROM (SELECT 1) AS one
LEFT JOIN authz_school_app_approvals a ON a.school_id = $1 AND a.client_id = $2
"""
_POLICY = "SELECT policy FROM authz_school_app_policies WHERE school_id = $1"
_SET_POLICY = """
INSERT INTO authz_school_app_policies (school_id, policy, changed_at, changed_by)
VALUES ($1, $2, to_timestamp($3), $4)
ON CONFLICT (school_id) DO UPDATE SET policy = EXCLUDED.policy, changed_at = EXCLUDED.changed_at,
    changed_by = EXCLUDED.changed_by
RETURNING (SELECT policy FROM authz_school_app_policies WHERE school_id = $1) AS before
"""
# An owner's approval is changed by an owner only: checked in the write itself, so an
# admin's approval or withdrawal that read the row before an owner's approval committed
# changes nothing (the use case checked first, to say why; this holds in a race).
_APPROVE = """
INSERT INTO authz_school_app_approvals
    (school_id, client_id, client_name, scope, approved_at, approved_by, approved_by_role)
VALUES ($1, $2, $3, $4, to_timestamp($5), $6, $7)
ON CONFLICT (school_id, client_id) DO UPDATE SET client_name = EXCLUDED.client_name, scope = EXCLUDED.scope,
    approved_at = EXCLUDED.approved_at, approved_by = EXCLUDED.approved_by,
    approved_by_role = EXCLUDED.approved_by_role
WHERE authz_school_app_approvals.approved_by_role <> 'owner' OR EXCLUDED.approved_by_role = 'owner'
RETURNING true
"""
_WITHDRAW = """
DELETE FROM authz_school_app_approvals
WHERE school_id = $1 AND client_id = $2 AND (approved_by_role <> 'owner' OR $3::text = 'owner')
"""
_APPROVALS = """
SELECT a.client_id, COALESCE(c.client_name, a.client_name) AS client_name, a.scope,
       COALESCE(c.is_integration, false) AS is_integration, c.verified_origin,
       extract(epoch FROM a.approved_at)::bigint AS approved_at, a.approved_by_role
FROM authz_school_app_approvals a LEFT JOIN authz_clients c ON c.client_id = a.client_id
WHERE a.school_id = $1 ORDER BY a.approved_at DESC, a.client_id
"""


class Approval(msgspec.Struct, frozen=True, kw_only=True):
    """An app the school approved, as its apps page lists it."""

    client_id: str
    client_name: str | None
    scope: str | None  # None: every area
    is_integration: bool
    verified_origin: str | None
    approved_at: int
    approved_by_role: str


class PgSchoolPolicyStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def standing(self, school_id: str, client_id: str) -> Standing:
        row = await self._pool.fetchrow(_STANDING, uuid.UUID(school_id), client_id)
        scope = frozenset(row["scope"].split()) if row["scope"] is not None else None
        return Standing(policy=row["policy"], approved=row["approved"], approved_scope=scope)

    async def policy(self, school_id: str) -> Policy:
        found = await self._pool.fetchval(_POLICY, uuid.UUID(school_id))
        return found or "anyone"

    async def set_policy(self, school_id: str, policy: Policy, *, by: str, now: int) -> Policy:
        """Set the school's policy; the one it had before."""
        before = await self._pool.fetchval(_SET_POLICY, uuid.UUID(school_id), policy, now, uuid.UUID(by))
        return before or "anyone"

    async def approve(
        self,
        school_id: str,
        client_id: str,
        *,
        client_name: str | None,
        scope: str | None,
        by: str,
        role: str,
        now: int,
    ) -> bool:
        """Approve one client id at the school (`scope`: up to these scopes; None: every
        area); an approval made before is replaced, but an owner's by an owner only.
        Whether it was written."""
        written = await self._pool.fetchval(
            _APPROVE, uuid.UUID(school_id), client_id, client_name, scope, now, uuid.UUID(by), role
        )
        return written is not None

    async def withdraw(self, school_id: str, client_id: str, *, role: str) -> bool:
        """Withdraw the approval (an owner's by an owner only); whether there was one to withdraw."""
        return not (await self._pool.execute(_WITHDRAW, uuid.UUID(school_id), client_id, role)).endswith(" 0")

    async def approvals(self, school_id: str) -> list[Approval]:
        rows = await self._pool.fetch(_APPROVALS, uuid.UUID(school_id))
        return [Approval(**dict(r)) for r in rows]
