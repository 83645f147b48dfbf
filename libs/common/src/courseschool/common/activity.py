"""The activity wire, declared once for both sides (as revocation.py is for the feed):
the resource API answers `GET /internal/activity` with what each grant did there
(resource_api/web/activity.py, from its storage/activity.py), and the authorization
server reads it for the connected-apps page and the school's apps page
(authz/activity.py). Both encode and decode these structures, so a field added or
renamed here changes both ends at once (tests/unit/test_activity_wire.py)."""

from __future__ import annotations

import msgspec

PATH = "/internal/activity"
MAX_GRANTS = 100  # `grant_id` values one request may name
MAX_CHANGED = 200  # the largest `changed_limit`
DEFAULT_DAYS = 30
DEFAULT_CHANGED = 20


class ChangedItem(msgspec.Struct, frozen=True, kw_only=True):
    area: str
    item_id: str | None  # None: a singleton (school, appearance, account)
    name: str | None  # its name or title when it was changed, where the area has one
    action: str  # create, update or delete
    at: str  # ISO 8601, UTC


class GrantActivity(msgspec.Struct, kw_only=True):
    """One grant's activity in the period; built up row by row by the resource API's
    storage, hence not frozen."""

    grant_id: str
    client_id: str
    user_id: str
    school_id: str
    reads: dict[str, int]  # area: reads in the period
    changes: dict[str, int]  # area: changes in the period
    changed: list[ChangedItem]  # newest first, at most the request's changed_limit
    last_acted: str | None


class ActivityAnswer(msgspec.Struct, frozen=True):
    since: str  # the start of the period's first day, UTC
    days: int
    grants: list[GrantActivity]  # the grant that acted last first


def decode_answer(body: bytes) -> ActivityAnswer:
    """The answer's structure, checked (msgspec.DecodeError / ValidationError otherwise)."""
    return msgspec.json.decode(body, type=ActivityAnswer)
