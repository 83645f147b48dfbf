"""What every administrative use case shares: who acts, the audit trail, and ending
grants (recorded in Postgres, published to the resource servers at once)."""

from __future__ import annotations

from typing import Any

from courseschool.common.logging import audit

from ...components import Components


class AdminBase:
    def __init__(self, c: Components, *, actor: str = "admin") -> None:
        self.c = c
        self.actor = actor

    def _audit(self, event: str, **fields: Any) -> None:
        audit(event, actor=self.actor, **fields)

    async def _end_grants(self, grant_ids: list[str], reason: str) -> int:
        for grant_id in grant_ids:
            await self.c.revoker.revoke_grant(grant_id, reason=reason)
        return len(grant_ids)
