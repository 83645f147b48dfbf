"""The resource API's service layer: one generic set of operations for every area,
driven by its `AreaSpec`. Tenancy, the scope guard and validation live here once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import asyncpg
import msgspec

from courseschool.common.errors import (
    AccessDeniedError,
    ConflictError,
    InsufficientScopeError,
    InvalidRequestError,
    InvalidTokenError,
    NotFoundError,
    OAuthError,
    ValidationFailedError,
    bearer_challenge,
)

from . import analytics
from .areas.registry import AreaSpec, RuleError, patch_type, validate_document
from .bearer import ANONYMOUS, BearerVerifier, Principal
from .files import PgFileStore
from .items import Conflict, Page, PgItemStore
from .settings import ResourceSettings

ANONYMOUS_REFUSED = "this resource needs an access token; see /.well-known/oauth-protected-resource"


class ResourceService:
    def __init__(self, settings: ResourceSettings, pool: asyncpg.Pool, verifier: BearerVerifier) -> None:
        self.settings = settings
        self.pool = pool
        self.items = PgItemStore(pool)
        self.files = PgFileStore(pool)
        self.verifier = verifier
        self.metadata_url = f"{settings.base_url}/.well-known/oauth-protected-resource"
        self._patch_types: dict[str, type] = {}

    # -- who is calling ---------------------------------------------------------------

    async def principal(self, authorization: str | None) -> Principal:
        """RFC 6750 §2.1: the Authorization header only; none means anonymous."""
        if authorization is None:
            return ANONYMOUS
        scheme, _, value = authorization.partition(" ")
        token = value.strip()
        try:
            if scheme.lower() != "bearer" or not token or " " in token:
                raise InvalidTokenError("the Authorization header must be 'Bearer <access token>'")
            return await self.verifier.verify(token)
        except InvalidTokenError as err:
            raise self.challenged(err) from None

    def challenged(self, err: OAuthError) -> OAuthError:
        err.headers["WWW-Authenticate"] = bearer_challenge(err, self.metadata_url)
        return err

    def require(self, principal: Principal, scope: str) -> str:
        """The scope guard; returns the school the token acts for."""
        if principal.anonymous:
            raise AccessDeniedError(ANONYMOUS_REFUSED)
        if scope not in principal.scopes:
            raise self.challenged(InsufficientScopeError(f"this operation needs the {scope} scope", scope=scope))
        assert principal.school_id is not None
        return principal.school_id

    # -- collections ------------------------------------------------------------------

    async def list(self, spec: AreaSpec, principal: Principal, query: Mapping[str, str]) -> Page:
        limit = self._limit(query.get("limit"))
        cursor = query.get("cursor") or None
        since = _timestamp(query.get("updated_since"), "updated_since")
        published = _boolean(query.get("published"), "published")
        school_ref = query.get("school")
        if principal.anonymous:
            if not spec.public:
                raise AccessDeniedError(ANONYMOUS_REFUSED)
            school_id = await self._school(school_ref) if school_ref else None
            if published is False:
                return Page(items=[], next_cursor=None)
            return await self.items.list(
                spec, school_id=school_id, published=True, updated_since=since, cursor=cursor, limit=limit
            )
        school_id = self.require(principal, spec.read_scope)
        if school_ref and await self.items.school_id(school_ref) != school_id:
            return Page(items=[], next_cursor=None)  # other schools do not exist for this token
        return await self.items.list(
            spec, school_id=school_id, published=published if spec.has_published else None, updated_since=since,
            cursor=cursor, limit=limit,
        )

    async def get(self, spec: AreaSpec, principal: Principal, item_id: str) -> dict[str, Any]:
        if principal.anonymous:
            if not spec.public:
                raise AccessDeniedError(ANONYMOUS_REFUSED)
            item = await self.items.get(spec, item_id)
            if item is None or not item["_published"]:
                raise NotFoundError(f"no such {spec.path} item")
            return _public(item)
        school_id = self.require(principal, spec.read_scope)
        item = await self.items.get(spec, item_id)
        if item is None or item["school_id"] != school_id:
            raise NotFoundError(f"no such {spec.path} item")
        return _public(item)

    async def create(self, spec: AreaSpec, principal: Principal, body: bytes) -> dict[str, Any]:
        school_id = self.require(principal, spec.write_scope)
        data = self._validated(spec, _json_object(body))
        try:
            return await self.items.create(spec, school_id, data)
        except Conflict:
            raise ConflictError(f"another {spec.path} item already has this {spec.unique}") from None

    async def update(self, spec: AreaSpec, principal: Principal, item_id: str, body: bytes) -> dict[str, Any]:
        school_id = self.require(principal, spec.write_scope)
        changes = self._patch(spec, body)
        item = await self.items.get(spec, item_id)
        if item is None or item["school_id"] != school_id:
            raise NotFoundError(f"no such {spec.path} item")
        current = {k: item[k] for k in spec.model.__struct_fields__ if k in item}  # type: ignore[union-attr]
        data = self._validated(spec, {**current, **changes})
        try:
            updated = await self.items.replace(spec, school_id, item_id, data)
        except Conflict:
            raise ConflictError(f"another {spec.path} item already has this {spec.unique}") from None
        if updated is None:
            raise NotFoundError(f"no such {spec.path} item")
        return updated

    async def delete(self, spec: AreaSpec, principal: Principal, item_id: str) -> None:
        school_id = self.require(principal, spec.write_scope)
        if not await self.items.delete(spec, school_id, item_id):
            raise NotFoundError(f"no such {spec.path} item")

    # -- singletons -------------------------------------------------------------------

    async def get_singleton(self, spec: AreaSpec, principal: Principal) -> dict[str, Any]:
        school_id = self.require(principal, spec.read_scope)
        stored = await self.items.get_singleton(spec, school_id, self._owner(spec, principal))
        if stored is not None:
            return stored
        defaults = self._defaults(spec)
        if defaults is None:
            raise NotFoundError(f"the {spec.path} has not been set up yet")
        return defaults

    async def update_singleton(self, spec: AreaSpec, principal: Principal, body: bytes) -> dict[str, Any]:
        school_id = self.require(principal, spec.write_scope)
        owner = self._owner(spec, principal)
        changes = self._patch(spec, body)
        current = await self.items.get_singleton(spec, school_id, owner) or self._defaults(spec) or {}
        current.pop("updated_at", None)
        data = self._validated(spec, {**current, **changes})
        return await self.items.put_singleton(spec, school_id, owner, data)

    # -- computed ---------------------------------------------------------------------

    async def analytics(self, spec: AreaSpec, principal: Principal, query: Mapping[str, str]) -> dict[str, Any]:
        school_id = self.require(principal, spec.read_scope)
        end = _timestamp(query.get("to"), "to") or dt.datetime.now(dt.UTC)
        start = _timestamp(query.get("from"), "from") or end - dt.timedelta(days=30)
        if not start < end or end - start > dt.timedelta(days=366):
            raise InvalidRequestError("the period must run forwards and span at most 366 days")
        return await analytics.school_figures(self.pool, school_id, start, end)

    # -- helpers ----------------------------------------------------------------------

    def _limit(self, value: str | None) -> int:
        if value is None or value == "":
            return self.settings.page_size_default
        if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= self.settings.page_size_max:
            raise InvalidRequestError(f"limit must be an integer from 1 to {self.settings.page_size_max}")
        return int(value)

    async def _school(self, ref: str) -> str:
        school_id = await self.items.school_id(ref[:100])
        if school_id is None:
            raise NotFoundError("no such school")
        return school_id

    def _patch(self, spec: AreaSpec, body: bytes) -> dict[str, Any]:
        assert spec.model is not None
        kind = self._patch_types.get(spec.name)
        if kind is None:  # built once per area, not per request
            kind = self._patch_types[spec.name] = patch_type(spec.model)
        try:
            patch = msgspec.json.decode(body, type=kind)
        except msgspec.ValidationError as exc:
            raise ValidationFailedError(str(exc)) from None
        except msgspec.DecodeError:
            raise InvalidRequestError("the body must be a JSON object") from None
        return msgspec.to_builtins(patch)

    @staticmethod
    def _validated(spec: AreaSpec, data: dict[str, Any]) -> dict[str, Any]:
        try:
            return validate_document(spec, data)
        except (msgspec.ValidationError, RuleError) as exc:
            raise ValidationFailedError(str(exc)) from None

    @staticmethod
    def _owner(spec: AreaSpec, principal: Principal) -> str:
        return principal.sub or "" if spec.per_user else ""

    @staticmethod
    def _defaults(spec: AreaSpec) -> dict[str, Any] | None:
        assert spec.model is not None
        try:
            return msgspec.to_builtins(spec.model())
        except TypeError:  # the model has required fields
            return None


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if not k.startswith("_")}


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise InvalidRequestError("the body must be a JSON object") from None
    if not isinstance(value, dict):
        raise InvalidRequestError("the body must be a JSON object")
    return value


def _timestamp(value: str | None, name: str) -> dt.datetime | None:
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
