"""`GET /internal/activity`: what grants did at this API, for the authorization server's
pages (the connected-apps page, the school owner's page). Internal only: the shared
INTERNAL_TOKEN, like every `/internal` path (the guard of `web/internal.py`; anyone
else: 404).

Parameters: `grant_id` (repeatable, up to 100), `user_id`, `school_id`: whose activity,
at least one, all that are given must hold (a school's page passes its school, so no
other school's activity is mixed in); `days` (default 30, at most
ACTIVITY_RETENTION_DAYS): the period, whole UTC days ending today; `changed_limit`
(default 20, at most 200): the changed items listed per grant, newest first.

Answer: `{"since", "days", "grants": [{"grant_id", "client_id", "user_id", "school_id",
"reads": {area: n}, "changes": {area: n}, "changed": [{"area", "item_id", "name",
"action", "at"}], "last_acted"}]}`, the grant that acted last first; a grant that did
nothing in the period is not listed. Reads show once flushed and drained (activity.py).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from courseschool.common.activity import DEFAULT_CHANGED, DEFAULT_DAYS, MAX_CHANGED, MAX_GRANTS, ActivityAnswer
from courseschool.common.clock import Clock
from courseschool.common.errors import InvalidRequestError
from courseschool.common.web import no_store_json

from ..settings import ResourceSettings
from ..storage.activity import ActivityQuery, PgActivityStore


def activity_routes(clock: Clock) -> list[HTTPRouteHandler]:
    @get("/activity", name="internal_activity")  # under the router of /internal
    async def internal_activity(
        request: Request[Any, Any, Any],
        activity_store: NamedDependency[PgActivityStore],
        settings: NamedDependency[ResourceSettings],
    ) -> Response[bytes]:
        days, query = activity_query(request, clock, settings.activity_retention_days)
        grants = await activity_store.summary(query)
        return no_store_json(ActivityAnswer(since=query.since.isoformat(), days=days, grants=grants))

    return [internal_activity]


def activity_query(request: Request[Any, Any, Any], clock: Clock, retention_days: int) -> tuple[int, ActivityQuery]:
    params = request.query_params
    grant_ids = tuple(params.getall("grant_id", []))
    if len(grant_ids) > MAX_GRANTS:
        raise InvalidRequestError(f"at most {MAX_GRANTS} grant_id values")
    for value in grant_ids:
        _uuid(value, "grant_id")
    user_id = params.get("user_id") or None
    school_id = params.get("school_id") or None
    if school_id is not None:
        _uuid(school_id, "school_id")
    if user_id is not None and (len(user_id) > 200 or "\x00" in user_id):
        raise InvalidRequestError("user_id is not a user id")
    if not (grant_ids or user_id or school_id):
        raise InvalidRequestError("name whose activity: grant_id, user_id or school_id")
    days = _bounded(params.get("days"), "days", DEFAULT_DAYS, 1, retention_days)
    changed_limit = _bounded(params.get("changed_limit"), "changed_limit", DEFAULT_CHANGED, 0, MAX_CHANGED)
    today = dt.datetime.fromtimestamp(clock.now() // 86400 * 86400, dt.UTC)
    since = today - dt.timedelta(days=days - 1)
    query = ActivityQuery(
        grant_ids=grant_ids, user_id=user_id, school_id=school_id, since=since, changed_limit=changed_limit
    )
    return days, query


def _uuid(value: str, name: str) -> None:
    try:
        uuid.UUID(value)
    except ValueError:
        raise InvalidRequestError(f"{name} must be a UUID") from None


def _bounded(value: str | None, name: str, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise InvalidRequestError(f"{name} must be an integer from {low} to {high}")
    return int(value)
