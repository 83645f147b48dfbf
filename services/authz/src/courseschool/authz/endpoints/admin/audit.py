"""The record of events (`authz_events`): administrators' actions, people's sign-ins and
consents, and security events, each with who, from where, which client and school, and
when. Filtered, newest first, a page at a time (`before`: the last id of the page seen)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from courseschool.common.errors import InvalidRequestError
from courseschool.common.text import has_hidden

from ...storage.events import EventQuery
from .base import AdminBase, unknown

MAX_ACTIONS = 500
KINDS = ("admin", "user", "security")


class AuditAdmin(AdminBase):
    async def list_actions(
        self,
        *,
        kind: str | None = None,
        user: str | None = None,
        client: str | None = None,
        school: str | None = None,
        action: str | None = None,
        since: str | None = None,
        until: str | None = None,
        before: int | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Newest first; `user` by id or email, `school` by slug or id, `since` and
        `until` ISO 8601 dates or times (UTC unless they name their offset; `until` is
        excluded), `before` an event id (the next page starts below the last one seen)."""
        _printable(kind=kind, user=user, client=client, school=school, action=action, since=since, until=until)
        if not 0 < limit <= MAX_ACTIONS:
            raise InvalidRequestError(f"limit must be 1 to {MAX_ACTIONS}")
        if kind is not None and kind not in KINDS:
            raise InvalidRequestError(f"kind must be one of {', '.join(KINDS)}")
        if before is not None and before < 1:
            raise InvalidRequestError("before must be an event id (a whole number from 1)")
        subject = school_id = None
        if user is not None:
            found = await self.c.admin_store.user(user)
            if found is None:
                raise unknown("user", user)
            subject = found["id"]
        if school is not None:
            named = await self.c.admin_store.school(school)
            if named is None:
                raise unknown("school", school)
            school_id = named["id"]
        first, last = _moment("since", since), _moment("until", until)
        if first is not None and last is not None and last <= first:
            raise InvalidRequestError("until must be later than since")
        query = EventQuery(
            kind=kind,
            subject=subject,
            client_id=client,
            school_id=school_id,
            action=action,
            since=first,
            until=last,
            before=before,
            limit=limit,
        )
        return await self.c.event_store.query(query)


def _printable(**filters: str | None) -> None:
    """A filter with a control or other hidden character matches no event, and PostgreSQL
    refuses a NUL in text outright (which was a 500): refused with a 400 first."""
    for name, value in filters.items():
        if value is not None and has_hidden(value):
            raise InvalidRequestError(f"{name} must not contain control characters")


def _moment(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidRequestError(
            f"{name} must be an ISO 8601 date or time, such as 2026-11-01 or 2026-11-01T09:00:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
