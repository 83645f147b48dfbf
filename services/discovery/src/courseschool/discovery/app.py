"""The discovery service's Litestar application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from litestar import Litestar, Request, Response, get

from courseschool.common.web import EXCEPTION_HANDLERS, RequestIdMiddleware, health_handlers

from .documents import DocumentCache, Source
from .settings import DiscoverySettings

WELL_KNOWN = {
    "/.well-known/oauth-authorization-server": Source("authz", "/internal/metadata/oauth-authorization-server"),
    "/.well-known/openid-configuration": Source("authz", "/internal/metadata/openid-configuration"),
    "/.well-known/oauth-protected-resource": Source("resource", "/internal/metadata/oauth-protected-resource"),
}


def create_app(settings: DiscoverySettings, *, upstreams: dict[str, httpx.AsyncClient] | None = None) -> Litestar:
    holder: dict[str, DocumentCache] = {}

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        clients = upstreams or {
            "authz": httpx.AsyncClient(base_url=settings.authz_internal_url),
            "resource": httpx.AsyncClient(base_url=settings.resource_internal_url),
        }
        holder["cache"] = DocumentCache(clients, settings.internal_token, settings.metadata_cache_ttl)
        try:
            yield
        finally:
            if upstreams is None:
                for client in clients.values():
                    await client.aclose()

    @get(list(WELL_KNOWN))
    async def well_known(request: Request) -> Response[bytes]:
        doc = await holder["cache"].get(WELL_KNOWN[request.url.path])
        headers = {"ETag": doc.etag, "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*"}
        if request.headers.get("if-none-match") == doc.etag:
            return Response(b"", status_code=304, headers=headers)
        return Response(doc.body, media_type="application/json", headers=headers)

    return Litestar(
        route_handlers=[well_known, *health_handlers({})],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[RequestIdMiddleware],
        logging_config=None,
        lifespan=[lifespan],
    )
