"""The discovery service's Litestar application: the well-known documents, the merged
OpenAPI document and the walkthrough, each served as pre-serialised bytes with an ETag."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec
from litestar import Litestar, Request, Response, get

from courseschool.common.metrics import CACHE
from courseschool.common.redis import create_redis
from courseschool.common.web import service_app

from .documents import Document, DocumentCache, Source, make_document
from .openapi import merged_openapi
from .settings import DiscoverySettings
from .walkthrough import render_walkthrough

WELL_KNOWN = {
    "/.well-known/oauth-authorization-server": Source("authz", "/internal/metadata/oauth-authorization-server"),
    "/.well-known/openid-configuration": Source("authz", "/internal/metadata/openid-configuration"),
    "/.well-known/oauth-protected-resource": Source("resource", "/internal/metadata/oauth-protected-resource"),
}
OPENAPI_PARTS = (Source("authz", "/internal/openapi.json"), Source("resource", "/internal/openapi.json"))


def _serve(request: Request, doc: Document, media_type: str) -> Response[bytes]:
    headers = {"ETag": doc.etag, "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*"}
    if request.headers.get("if-none-match") == doc.etag:
        return Response(b"", status_code=304, headers=headers)
    return Response(doc.body, media_type=media_type, headers=headers)


def create_app(settings: DiscoverySettings, *, upstreams: dict[str, httpx.AsyncClient] | None = None) -> Litestar:
    holder: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        clients = upstreams or {
            "authz": httpx.AsyncClient(base_url=settings.authz_internal_url),
            "resource": httpx.AsyncClient(base_url=settings.resource_internal_url),
        }
        redis = create_redis(settings.redis_url) if settings.redis_url else None
        holder["cache"] = DocumentCache(clients, settings.internal_token, settings.metadata_cache_ttl, redis)
        try:
            yield
        finally:
            if upstreams is None:
                for client in clients.values():
                    await client.aclose()
            if redis is not None:
                await redis.aclose()

    @get(list(WELL_KNOWN))
    async def well_known(request: Request) -> Response[bytes]:
        return _serve(request, await holder["cache"].get(WELL_KNOWN[request.url.path]), "application/json")

    async def merge() -> bytes:
        parts = [await holder["cache"].json(source) for source in OPENAPI_PARTS]
        return msgspec.json.encode(merged_openapi(settings.base_url, parts))

    @get("/openapi.json")
    async def openapi(request: Request) -> Response[bytes]:
        return _serve(request, await holder["cache"].cached("openapi", merge), "application/json")

    walkthrough = make_document(render_walkthrough(settings.base_url))  # rendered once per app

    @get("/auth.md")
    async def auth_md(request: Request) -> Response[bytes]:
        CACHE.labels("walkthrough", "hit").inc()
        return _serve(request, walkthrough, "text/markdown")  # Litestar adds "; charset=utf-8"

    async def check_upstreams() -> None:
        for source in WELL_KNOWN.values():
            await holder["cache"].get(source)

    return service_app(
        "discovery",
        route_handlers=[well_known, openapi, auth_md],
        ready_checks={"upstreams": check_upstreams},
        lifespan=[lifespan],
    )
