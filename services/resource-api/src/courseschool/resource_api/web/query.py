"""Query strings of the resource API, parsed once into the service's input."""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec
from litestar import Request

from courseschool.common.clock import Clock
from courseschool.common.errors import InvalidRequestError

from ..service import ListQuery
from ..settings import ResourceSettings

MAX_PERIOD = dt.timedelta(days=366)


def query_of(request: Request[Any, Any, Any]) -> dict[str, str]:
    query = {k: v for k, v in request.query_params.items() if isinstance(v, str)}
    if any("\x00" in k or "\x00" in v for k, v in query.items()):
        raise InvalidRequestError("parameters must not contain NUL characters")
    return query


def list_query(request: Request[Any, Any, Any], settings: ResourceSettings) -> ListQuery:
    query = query_of(request)
    return ListQuery(
        limit=_limit(query.get("limit"), settings),
        cursor=query.get("cursor") or None,
        updated_since=timestamp(query.get("updated_since"), "updated_since"),
        published=_boolean(query.get("published"), "published"),
        school=query.get("school") or None,
    )


def period(request: Request[Any, Any, Any], clock: Clock) -> tuple[dt.datetime, dt.datetime]:
    """`from` and `to` of the analytics: the 30 days up to now (the application's clock)
    unless given, at most 366."""
    query = query_of(request)
    end = timestamp(query.get("to"), "to") or dt.datetime.fromtimestamp(clock.now(), dt.UTC)
    start = timestamp(query.get("from"), "from") or end - dt.timedelta(days=30)
    if not start < end or end - start > MAX_PERIOD:
        raise InvalidRequestError("the period must run forwards and span at most 366 days")
    return start, end


def _limit(value: str | None, settings: ResourceSettings) -> int:
    if value is None or value == "":
        return settings.page_size_default
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= settings.page_size_max:
        raise InvalidRequestError(f"limit must be an integer from 1 to {settings.page_size_max}")
    return int(value)


def timestamp(value: str | None, name: str) -> dt.datetime | None:
    """An RFC 3339 date-time with its zone, or a date (midnight UTC)."""
    if not value:
        return None
    try:
        parsed = msgspec.convert(value, dt.datetime)
    except msgspec.ValidationError:
        try:
            parsed = dt.datetime.combine(msgspec.convert(value, dt.date), dt.time(), dt.UTC)
        except msgspec.ValidationError:
            raise InvalidRequestError(f"{name} must be an RFC 3339 date-time or a date") from None
    if parsed.tzinfo is None:
        raise InvalidRequestError(f"{name} must carry a time zone")
    return parsed


def _boolean(value: str | None, name: str) -> bool | None:
    if value is None or value == "":
        return None
    if value not in ("true", "false"):
        raise InvalidRequestError(f"{name} must be true or false")
    return value == "true"
