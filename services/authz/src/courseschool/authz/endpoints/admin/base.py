"""What every administrative use case shares: who acts and from where, the audit trail
(logged, and kept in `authz_events` for `admin audit list` before the action answers), and ending grants
(recorded in Postgres, published to the resource servers at once)."""

from __future__ import annotations

from typing import Any

from courseschool.common.audit_events import AuditEvent
from courseschool.common.errors import NotFoundError, fit_description
from courseschool.common.logging import audit

from ...families import Administration


class AdminBase:
    def __init__(self, c: Administration, *, actor: str = "admin", source: str = "unknown") -> None:
        self.c = c
        self.actor = actor
        self.source = source

    async def _audit(
        self, event: AuditEvent, *, subject: str | None = None, client_id: str | None = None, **fields: Any
    ) -> None:
        audit(event, actor=self.actor, subject=subject, client_id=client_id, source=self.source, **fields)
        await self.c.events.flush()

    async def _end_grants(self, grant_ids: list[str], reason: str) -> int:
        for grant_id in grant_ids:
            await self.c.revoker.revoke_grant(grant_id, reason=reason)
        return len(grant_ids)


def unknown(what: str, ref: str) -> NotFoundError:
    """`no <what> <ref>`: the reference fitted to RFC 6749 §5.2's characters for the
    answer, and as given in the detail (the log; the admin CLI prints both)."""
    return NotFoundError(f"no {what} {fit_description(ref)}", detail=f"{what} as given: {ref}")
