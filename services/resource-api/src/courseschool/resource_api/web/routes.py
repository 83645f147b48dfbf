"""Route handlers for every area, made from its `AreaSpec` by one factory per kind,
each named after its area and action (`courses_list`, `area_route`). Each handler
receives the guarded caller, the parsed input and what it uses (web/dependencies.py),
calls `ResourceService` (a singleton's: `Singletons`), and renders JSON."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import FunctionType
from typing import Any, cast

import msgspec
from litestar import Request, Response, delete, get, patch, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.middleware import DefineMiddleware
from litestar.params import FromPath, SkipValidation

from courseschool.common.clock import Clock
from courseschool.common.errors import (
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PlatformError,
    UnsupportedMediaTypeError,
    fit_description,
)

from ..areas.registry import AREA_SPECS, AreaSpec
from ..auth.verifier import Principal
from ..catalogue import cache_control
from ..service import ResourceService
from ..settings import ResourceSettings
from ..singletons import Singletons
from ..uploads import UploadRefused, check_upload, safe_filename
from .body import json_object, json_patch
from .catalogue_hits import CatalogueHits
from .principal import guard
from .query import list_query, period

API = "/api/v1"
Service = NamedDependency[ResourceService]
OneValue = NamedDependency[Singletons]
Settings = NamedDependency[ResourceSettings]
Caller = NamedDependency[Principal]
AppClock = NamedDependency[SkipValidation[Clock]]  # a Protocol: nothing to validate against
Handler = Callable[..., Awaitable[Any]]


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json", headers=headers)


def area_route(
    route: type[HTTPRouteHandler], path: str, spec: AreaSpec, action: str, **options: Any
) -> Callable[[Handler], HTTPRouteHandler]:
    """`route(path, ...)` over a generated handler, named `<area>_<action>` (`courses_list`)
    as Litestar's route name and as the function's own, so that a traceback, a profile or
    a log line says which area's handler it was, though one factory made them all."""
    name = f"{spec.name}_{action}"

    def named(handler: Handler) -> HTTPRouteHandler:
        function = cast(FunctionType, handler)
        function.__name__ = function.__qualname__ = name
        function.__code__ = function.__code__.replace(co_name=name, co_qualname=name)  # what a traceback shows
        return route(path, name=name, **options)(handler)

    return named


def collection_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    base = f"{API}/{spec.path}"
    item_path = base + "/{item_id:str}"
    read = guard(spec.read_scope, public=spec.public)
    write = guard(spec.write_scope)

    # A public area's pages held for anonymous callers are sent before this handler runs.
    hits = [DefineMiddleware(CatalogueHits, area=spec.name)] if spec.public else None

    @area_route(get, base, spec, "list", opt=read, middleware=hits)
    async def list_items(
        request: Request[Any, Any, Any], resources: Service, principal: Caller, settings: Settings
    ) -> Response[bytes]:
        query = list_query(request, settings)
        if principal.anonymous:  # the same for every anonymous caller: kept briefly, cacheable
            cache = {"Cache-Control": cache_control(settings.catalogue_cache_ttl)}
            return Response(await resources.catalogue(spec, query), media_type="application/json", headers=cache)
        return _json(await resources.list(spec, principal, query))

    @area_route(get, item_path, spec, "get", opt=read)
    async def get_item(item_id: FromPath[str], resources: Service, principal: Caller) -> Response[bytes]:
        return _json(await resources.get(spec, principal, item_id))

    if not spec.writable:
        return [list_items, get_item]

    @area_route(post, base, spec, "create", status_code=201, opt=write)
    async def create_item(request: Request[Any, Any, Any], resources: Service, principal: Caller) -> Response[bytes]:
        item = await resources.create(spec, principal, json_object(await request.body()))
        return _json(item, 201, {"Location": f"{base}/{item['id']}"})

    @area_route(patch, item_path, spec, "update", opt=write)
    async def update_item(
        item_id: FromPath[str], request: Request[Any, Any, Any], resources: Service, principal: Caller
    ) -> Response[bytes]:
        changes = json_patch(spec, await request.body())
        return _json(await resources.update(spec, principal, item_id, changes))

    @area_route(delete, item_path, spec, "delete", status_code=204, opt=write)
    async def delete_item(item_id: FromPath[str], resources: Service, principal: Caller) -> None:
        await resources.delete(spec, principal, item_id)

    return [list_items, get_item, create_item, update_item, delete_item]


def singleton_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    path = f"{API}/{spec.path}"

    @area_route(get, path, spec, "get", opt=guard(spec.read_scope))
    async def get_one(singletons: OneValue, principal: Caller) -> Response[bytes]:
        return _json(await singletons.get(spec, principal))

    @area_route(patch, path, spec, "update", opt=guard(spec.write_scope))
    async def update_one(request: Request[Any, Any, Any], singletons: OneValue, principal: Caller) -> Response[bytes]:
        return _json(await singletons.update(spec, principal, json_patch(spec, await request.body())))

    return [get_one, update_one] if spec.writable else [get_one]


def analytics_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    @area_route(get, f"{API}/{spec.path}", spec, "get", opt=guard(spec.read_scope))
    async def figures(
        request: Request[Any, Any, Any], resources: Service, principal: Caller, clock: AppClock
    ) -> Response[bytes]:
        start, end = period(request, clock)
        return _json(await resources.analytics(principal, start, end))

    return [figures]


def upload_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    path = f"{API}/{spec.path}"

    @area_route(post, path, spec, "upload", status_code=201, opt=guard(spec.write_scope))
    async def upload(
        request: Request[Any, Any, Any], resources: Service, principal: Caller, settings: Settings
    ) -> Response[bytes]:
        if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
            raise UnsupportedMediaTypeError("send the file as multipart/form-data in a field named 'file'")
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidRequestError("send the file in a multipart field named 'file'")
        content = await upload.read()
        try:
            kind = check_upload(upload.content_type, content, settings.upload_max_bytes)
        except UploadRefused as exc:
            raise _refusal(exc) from None
        saved = await resources.upload(principal, safe_filename(upload.filename), kind, content)
        url = f"{settings.base_url}{path}/{saved['id']}"
        return _json({**saved, "url": url}, 201, {"Location": url})

    @area_route(get, path + "/{file_id:str}", spec, "download")
    async def download(file_id: FromPath[str], resources: Service) -> Response[bytes]:
        """Anyone with the stable URL (no token is read)."""
        row = await resources.files.get(file_id)
        if row is None:
            raise NotFoundError("no such file")
        inline = row["content_type"].startswith("image/")
        return Response(
            row["content"],
            media_type=row["content_type"],
            headers={
                "Cache-Control": "public, max-age=31536000, immutable",
                "ETag": '"' + row["sha256"].hex()[:32] + '"',
                "Content-Disposition": f'{"inline" if inline else "attachment"}; filename="{row["filename"]}"',
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'; sandbox",
            },
        )

    return [upload, download]


def _refusal(exc: UploadRefused) -> PlatformError:
    description = fit_description(str(exc))  # it may quote the part's content type, the caller's text
    if exc.status == 413:
        return PayloadTooLargeError(description)
    if exc.status == 415:
        return UnsupportedMediaTypeError(description)
    return InvalidRequestError(description)


FACTORIES: dict[str, Callable[[AreaSpec], list[HTTPRouteHandler]]] = {
    "collection": collection_routes,
    "singleton": singleton_routes,
    "computed": analytics_routes,
    "upload": upload_routes,
}


def all_routes() -> list[HTTPRouteHandler]:
    return [handler for spec in AREA_SPECS for handler in FACTORIES[spec.kind](spec)]
