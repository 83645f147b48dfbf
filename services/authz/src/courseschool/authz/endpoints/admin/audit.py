"""The record of administrative actions: who did what to whom, from where, and when."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from courseschool.common.errors import InvalidRequestError, NotFoundError

from .base import AdminBase

MAX_ACTIONS = 500


class AuditAdmin(AdminBase):
    async def list_actions(
        self,
        *,
        user: str | None = None,
        client: str | None = None,
        action: str | None = None,
        since: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Newest first; `user` by id or email, `since` an ISO 8601 date or time (UTC
        unless it names its offset)."""
        if not 0 < limit <= MAX_ACTIONS:
            raise InvalidRequestError(f"limit must be 1 to {MAX_ACTIONS}")
        subject = None
        if user is not None:
            found = await self.c.admin_store.user(user)
            if found is None:
                raise NotFoundError(f"no user {user}")
            subject = found["id"]
        return await self.c.admin_store.actions(
            subject=subject, client_id=client, action=action, since=_since(since), limit=limit
        )


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidRequestError(
            "since must be an ISO 8601 date or time, such as 2026-11-01 or 2026-11-01T09:00:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
