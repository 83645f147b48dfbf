"""The resource API's service layer: one generic set of operations for every area,
driven by its `AreaSpec` (a singleton area's: singletons.py). Callers arrive verified
and scope-checked (`web/principal.py`) with their input parsed (queries:
`web/query.py`; bodies: `web/body.py`), so nothing here reads bytes or a request;
tenancy and validation live here once."""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg
import msgspec

from courseschool.common.errors import ConflictError, NotFoundError, ValidationFailedError
from courseschool.common.scopes import ANALYTICS

from .activity import ReadCounter
from .areas.registry import AreaSpec
from .areas.rules import RuleError, validate_document
from .auth.verifier import ANONYMOUS, Principal
from .catalogue import CatalogueCache
from .schools import SchoolDirectory
from .storage import analytics
from .storage.activity import Actor
from .storage.files import PgFileStore
from .storage.items import Conflict, Page, PgItemStore


class ListQuery(msgspec.Struct, frozen=True, kw_only=True):
    """The query of a collection's list, parsed (web/query.py)."""

    limit: int
    cursor: str | None = None
    updated_since: dt.datetime | None = None
    published: bool | None = None
    school: str | None = None  # a slug or an id


class ResourceService:
    """The items of every collection area (the anonymous catalogue among them), the
    analytics and the uploads; a singleton area's one value is `Singletons`'
    (singletons.py). Built once per process (components.py)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        items: PgItemStore,
        files: PgFileStore,
        schools: SchoolDirectory,
        reads: ReadCounter,
        catalogue_cache: CatalogueCache,
    ) -> None:
        """`reads` counts what tokens read for their grant's activity; changes are
        recorded by the stores, with the change (activity.py)."""
        self.pool = pool
        self.items = items
        self.files = files
        self.schools = schools
        self.reads = reads
        self.catalogue_cache = catalogue_cache

    # -- collections ------------------------------------------------------------------

    async def catalogue(self, spec: AreaSpec, query: ListQuery) -> bytes:
        """A page of the public catalogue for anonymous callers, encoded (catalogue.py)."""
        held = self.catalogue_cache.get(spec.name, query)  # the whole parsed query is the key
        if held is not None:
            return held
        body = msgspec.json.encode(await self.list(spec, ANONYMOUS, query))
        self.catalogue_cache.put(spec.name, query, body)
        return body

    async def list(self, spec: AreaSpec, principal: Principal, query: ListQuery) -> Page:
        if principal.anonymous:  # the public catalogue (the route allows it only for public areas)
            school_id = await self._school_id(query.school) if query.school else None
            if query.published is False:
                return Page(items=[], next_cursor=None)
            page = await self.items.list(
                spec,
                school_id=school_id,
                published=True,
                updated_since=query.updated_since,
                cursor=query.cursor,
                limit=query.limit,
            )
            return Page(items=[_shown(spec, principal, item) for item in page.items], next_cursor=page.next_cursor)
        school_id = school_of(principal)
        if query.school:
            named = await self.schools.find(query.school)
            if named is None or named.id != school_id:
                self.reads.count(principal, spec.name)
                return Page(items=[], next_cursor=None)  # other schools do not exist for this token
        page = await self.items.list(
            spec,
            school_id=school_id,
            published=query.published if spec.has_published else None,
            updated_since=query.updated_since,
            cursor=query.cursor,
            limit=query.limit,
        )
        self.reads.count(principal, spec.name)
        return page

    async def get(self, spec: AreaSpec, principal: Principal, item_id: str) -> dict[str, Any]:
        item = await self.items.get(spec, item_id)
        visible = item is not None and (
            item["_published"] if principal.anonymous else item["school_id"] == school_of(principal)
        )
        if item is None or not visible:
            raise NotFoundError(f"no such {spec.path} item")
        if not principal.anonymous:
            self.reads.count(principal, spec.name)
        return _shown(spec, principal, item)

    async def create(self, spec: AreaSpec, principal: Principal, document: dict[str, Any]) -> dict[str, Any]:
        """`document`: the new item as decoded (web/body.py), validated here."""
        school_id = school_of(principal)
        data = validated(spec, document)
        try:
            created = await self.items.create(spec, school_id, data, actor(principal))
        except Conflict:
            raise ConflictError(f"another {spec.path} item already has this {spec.unique}") from None
        self.catalogue_cache.forget(spec.name)  # after the write (a read racing it may keep a page for the TTL)
        return created

    async def update(
        self, spec: AreaSpec, principal: Principal, item_id: str, changes: dict[str, Any]
    ) -> dict[str, Any]:
        """`changes`: the fields to change, decoded as the area's patch (web/body.py)."""
        school_id = school_of(principal)
        item = await self.items.get(spec, item_id)
        if item is None or item["school_id"] != school_id:
            raise NotFoundError(f"no such {spec.path} item")
        assert spec.model is not None
        current = {k: item[k] for k in spec.model.__struct_fields__ if k in item}
        data = validated(spec, {**current, **changes})
        try:
            updated = await self.items.replace(spec, school_id, item_id, data, actor(principal))
        except Conflict:
            raise ConflictError(f"another {spec.path} item already has this {spec.unique}") from None
        if updated is None:
            raise NotFoundError(f"no such {spec.path} item")
        self.catalogue_cache.forget(spec.name)
        return updated

    async def delete(self, spec: AreaSpec, principal: Principal, item_id: str) -> None:
        if not await self.items.delete(spec, school_of(principal), item_id, actor(principal)):
            raise NotFoundError(f"no such {spec.path} item")
        self.catalogue_cache.forget(spec.name)

    # -- computed ---------------------------------------------------------------------

    async def analytics(self, principal: Principal, start: dt.datetime, end: dt.datetime) -> dict[str, Any]:
        figures = await analytics.school_figures(self.pool, school_of(principal), start, end)
        self.reads.count(principal, ANALYTICS.name)
        return figures

    # -- uploads ----------------------------------------------------------------------

    async def upload(self, principal: Principal, filename: str, content_type: str, content: bytes) -> dict[str, Any]:
        return await self.files.save(school_of(principal), filename, content_type, content, actor(principal))

    # -- helpers ----------------------------------------------------------------------

    async def _school_id(self, ref: str) -> str:
        school = await self.schools.find(ref)
        if school is None:
            raise NotFoundError("no such school")
        return school.id


def validated(spec: AreaSpec, data: dict[str, Any]) -> dict[str, Any]:
    """`data` as the area stores it, or 422: every write goes through this."""
    try:
        return validate_document(spec, data)
    except (msgspec.ValidationError, RuleError) as exc:
        raise ValidationFailedError(str(exc)) from None


def school_of(principal: Principal) -> str:
    """The school the token acts for (the route's guard let no anonymous caller here)."""
    assert principal.school_id is not None
    return principal.school_id


def actor(principal: Principal) -> Actor:
    """Whose change it is: the token's grant, client and user (storage/activity.py)."""
    return Actor(grant_id=principal.grant_id, client_id=principal.client_id or "", user_id=principal.sub or "")


def _shown(spec: AreaSpec, principal: Principal, item: dict[str, Any]) -> dict[str, Any]:
    """What the caller sees of an item: never the store's own keys (`_published`), and
    to an anonymous caller none of the area's private fields."""
    private = spec.private_fields if principal.anonymous else ()
    return {k: v for k, v in item.items() if not k.startswith("_") and k not in private}
