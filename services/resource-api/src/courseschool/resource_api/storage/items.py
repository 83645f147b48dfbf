"""Storage of resource items and singletons: plain SQL over `api_items` and
`api_singletons`, and the opaque list cursor. (Schools: `schools.py` beside it.)

PostgreSQL's clock records here, and only records: `created_at` and `updated_at` are the
`clock_timestamp()` of the write, in microseconds, the order the list and its cursor
follow (`created_at`, then `id`) and the instant the change's activity record carries.
Nothing here decides by the time of day; `updated_since` is the caller's own instant."""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from typing import Any

import asyncpg
import msgspec

from courseschool.common.errors import InvalidRequestError

from ..areas.registry import AreaSpec
from .activity import Actor, actor_parameters, record_change

_ITEM_COLUMNS = "id::text, school_id::text, data, published, created_at, updated_at"

_LIST = f"""
SELECT {_ITEM_COLUMNS} FROM api_items
WHERE area = $1
  AND ($2::uuid IS NULL OR school_id = $2)
  AND ($3::boolean IS NULL OR published = $3)
  AND ($4::timestamptz IS NULL OR updated_at >= $4)
  AND ($5::timestamptz IS NULL OR (created_at, id) > ($5, $6::uuid))
ORDER BY created_at, id
LIMIT $7
"""
_GET = f"SELECT {_ITEM_COLUMNS} FROM api_items WHERE id = $1 AND area = $2"
# Each change writes its record in the same statement (activity.RECORD_CHANGE), from
# `changed`: when, which item, its school and its name ($7 / $4: the area's label field).
_WRITTEN = "SELECT id::text, school_id::text, data, published, created_at, updated_at FROM written"
# One instant for both stamps (two clock_timestamp() defaults may differ by a microsecond):
# a new item's updated_at equals its created_at.
_INSERT = f"""
WITH written AS (
    INSERT INTO api_items (id, school_id, area, unique_key, published, data, created_at, updated_at)
    SELECT $1, $2, $3, $4, $5, $6, t, t FROM clock_timestamp() AS t
    RETURNING *
),
changed AS (SELECT updated_at AS at, id, school_id, data ->> $7::text AS name FROM written),
{record_change(8)}
{_WRITTEN}
"""
_UPDATE = f"""
WITH written AS (
    UPDATE api_items SET data = $3, unique_key = $4, published = $5, updated_at = clock_timestamp()
    WHERE id = $1 AND school_id = $2 AND area = $6
    RETURNING *
),
changed AS (SELECT updated_at AS at, id, school_id, data ->> $7::text AS name FROM written),
{record_change(8)}
{_WRITTEN}
"""
_DELETE = f"""
WITH written AS (DELETE FROM api_items WHERE id = $1 AND school_id = $2 AND area = $3 RETURNING *),
changed AS (SELECT clock_timestamp() AS at, id, school_id, data ->> $4::text AS name FROM written),
{record_change(5)}
SELECT count(*) FROM written
"""
_GET_SINGLETON = "SELECT data, updated_at FROM api_singletons WHERE school_id = $1 AND area = $2 AND owner = $3"
_PUT_SINGLETON = f"""
WITH written AS (
    INSERT INTO api_singletons (school_id, area, owner, data) VALUES ($1, $2, $3, $4)
    ON CONFLICT (school_id, area, owner) DO UPDATE SET data = EXCLUDED.data, updated_at = clock_timestamp()
    RETURNING data, updated_at, school_id
),
changed AS (SELECT updated_at AS at, NULL::uuid AS id, school_id, NULL::text AS name FROM written),
{record_change(5)}
SELECT data, updated_at FROM written
"""


class Conflict(Exception):
    """A unique field already holds this value in the school."""


class Page(msgspec.Struct, frozen=True):
    items: list[dict[str, Any]]
    next_cursor: str | None


def encode_cursor(created_at: dt.datetime, item_id: str) -> str:
    raw = msgspec.json.encode([created_at.isoformat(), item_id])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> tuple[dt.datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, item_id = msgspec.json.decode(raw, type=tuple[dt.datetime, uuid.UUID])
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        raise InvalidRequestError("the cursor is not one this API handed out") from None
    if created.tzinfo is None:
        raise InvalidRequestError("the cursor is not one this API handed out")
    return created, item_id


def _out(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "id": row["id"],
        "school_id": row["school_id"],
        **row["data"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def unique_value(spec: AreaSpec, data: dict[str, Any]) -> str | None:
    value = data.get(spec.unique) if spec.unique else None
    return str(value).lower() if value is not None else None


class PgItemStore:
    """Works on a pool, or on one connection inside a transaction (the seed)."""

    def __init__(self, pool: asyncpg.Pool | asyncpg.Connection) -> None:
        self._pool = pool

    async def list(
        self,
        spec: AreaSpec,
        *,
        school_id: str | None,
        published: bool | None,
        updated_since: dt.datetime | None,
        cursor: str | None,
        limit: int,
    ) -> Page:
        after, after_id = decode_cursor(cursor) if cursor else (None, None)
        rows = await self._pool.fetch(
            _LIST,
            spec.name,
            uuid.UUID(school_id) if school_id else None,
            published,
            updated_since,
            after,
            after_id,
            limit + 1,
        )
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
        return Page(items=[_out(r) for r in rows], next_cursor=next_cursor)

    async def get(self, spec: AreaSpec, item_id: str) -> dict[str, Any] | None:
        try:
            key = uuid.UUID(item_id)
        except ValueError:
            return None
        row = await self._pool.fetchrow(_GET, key, spec.name)
        if row is None:
            return None
        return {**_out(row), "_published": row["published"]}

    async def create(
        self, spec: AreaSpec, school_id: str, data: dict[str, Any], actor: Actor | None = None
    ) -> dict[str, Any]:
        """`actor`: whose change it is, recorded with it (none: the demo seed's, not recorded)."""
        try:
            row = await self._pool.fetchrow(
                _INSERT,
                uuid.uuid4(),
                uuid.UUID(school_id),
                spec.name,
                unique_value(spec, data),
                bool(data.get("published", False)),
                data,
                spec.label,
                *actor_parameters(actor, spec.name, "create"),
            )
        except asyncpg.UniqueViolationError:
            raise Conflict(spec.unique) from None
        return _out(row)

    async def replace(
        self, spec: AreaSpec, school_id: str, item_id: str, data: dict[str, Any], actor: Actor | None = None
    ) -> dict[str, Any] | None:
        try:
            row = await self._pool.fetchrow(
                _UPDATE,
                uuid.UUID(item_id),
                uuid.UUID(school_id),
                data,
                unique_value(spec, data),
                bool(data.get("published", False)),
                spec.name,
                spec.label,
                *actor_parameters(actor, spec.name, "update"),
            )
        except asyncpg.UniqueViolationError:
            raise Conflict(spec.unique) from None
        return _out(row) if row else None

    async def delete(self, spec: AreaSpec, school_id: str, item_id: str, actor: Actor | None = None) -> bool:
        try:
            key = uuid.UUID(item_id)
        except ValueError:
            return False
        deleted = await self._pool.fetchval(
            _DELETE, key, uuid.UUID(school_id), spec.name, spec.label, *actor_parameters(actor, spec.name, "delete")
        )
        return bool(deleted)

    async def get_singleton(self, spec: AreaSpec, school_id: str, owner: str) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_GET_SINGLETON, uuid.UUID(school_id), spec.name, owner)
        return {**row["data"], "updated_at": row["updated_at"].isoformat()} if row else None

    async def put_singleton(
        self, spec: AreaSpec, school_id: str, owner: str, data: dict[str, Any], actor: Actor | None = None
    ) -> dict[str, Any]:
        row = await self._pool.fetchrow(
            _PUT_SINGLETON, uuid.UUID(school_id), spec.name, owner, data, *actor_parameters(actor, spec.name, "update")
        )
        return {**row["data"], "updated_at": row["updated_at"].isoformat()}
