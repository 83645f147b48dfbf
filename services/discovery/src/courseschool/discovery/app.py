"""The discovery service's Litestar application: the well-known documents, the merged
OpenAPI document and the walkthrough, each served as pre-serialised bytes with an ETag."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
import msgspec
from litestar import Litestar, asgi
from litestar.types import Receive, Scope, Send

from courseschool.common.http import Held
from courseschool.common.metrics import CACHE
from courseschool.common.redis import create_redis
from courseschool.common.web import HeldLookup, send_document, service_app

from .documents import DocumentCache, Source, make_document
from .openapi import merged_openapi
from .settings import DiscoverySettings
from .walkthrough import render_walkthrough

WELL_KNOWN = {
    "/.well-known/oauth-authorization-server": Source("authz", "/internal/metadata/oauth-authorization-server"),
    "/.well-known/openid-configuration": Source("authz", "/internal/metadata/openid-configuration"),
    "/.well-known/oauth-protected-resource": Source("resource", "/internal/metadata/oauth-protected-resource"),
}
OPENAPI_PARTS = (Source("authz", "/internal/openapi.json"), Source("resource", "/internal/openapi.json"))
OPENAPI = "openapi"  # the merged document's key in the cache


@asynccontextmanager
async def _lifespan(
    settings: DiscoverySettings, upstreams: dict[str, httpx.AsyncClient] | None, app: Litestar
) -> AsyncIterator[None]:
    """The upstream clients, Redis and the document cache (`app.state.documents`) for the app's life;
    `upstreams` given by the caller stay the caller's to close."""
    clients = upstreams or {
        "authz": httpx.AsyncClient(base_url=settings.authz_internal_url),
        "resource": httpx.AsyncClient(base_url=settings.resource_internal_url),
    }
    redis = create_redis(settings.redis_url) if settings.redis_url else None
    app.state.documents = DocumentCache(clients, settings.internal_token, settings.metadata_cache_ttl, redis)
    try:
        yield
    finally:
        if upstreams is None:
            for client in clients.values():
                await client.aclose()
        if redis is not None:
            await redis.aclose()


def create_app(settings: DiscoverySettings, *, upstreams: dict[str, httpx.AsyncClient] | None = None) -> Litestar:
    """The app; its `DocumentCache` is made at start-up and kept on `app.state.documents`."""
    lifespan = partial(_lifespan, settings, upstreams)

    def fresh(key: str) -> HeldLookup:
        """What the front door (`common.web.HeldDocuments`) sends while it is fresh; the
        routes below fetch it again once its time is up. Nothing before start-up."""

        def lookup() -> Held | None:
            documents: DocumentCache | None = app.state.get("documents")
            return documents.fresh(key) if documents is not None else None

        return lookup

    @asgi(list(WELL_KNOWN), copy_scope=False)
    async def well_known(scope: Scope, receive: Receive, send: Send) -> None:
        await send_document(scope, send, await _documents(scope).get(WELL_KNOWN[scope["path"]]))

    @asgi("/openapi.json", copy_scope=False)
    async def openapi(scope: Scope, receive: Receive, send: Send) -> None:
        documents = _documents(scope)

        async def merge() -> bytes:
            parts = [await documents.json(source) for source in OPENAPI_PARTS]
            return msgspec.json.encode(merged_openapi(settings.base_url, parts))

        await send_document(scope, send, await documents.cached(OPENAPI, merge))

    walkthrough = make_document(render_walkthrough(settings.base_url), "text/markdown; charset=utf-8")
    walkthrough_hits = CACHE.labels("walkthrough", "hit")

    def walkthrough_hit() -> Held:
        walkthrough_hits.inc()
        return walkthrough

    @asgi("/auth.md", copy_scope=False)
    async def auth_md(scope: Scope, receive: Receive, send: Send) -> None:
        await send_document(scope, send, walkthrough_hit())

    async def check_upstreams() -> None:
        for source in WELL_KNOWN.values():
            await app.state.documents.get(source)

    app = service_app(
        "discovery",
        route_handlers=[well_known, openapi, auth_md],
        ready_checks={"upstreams": check_upstreams},
        lifespan=[lifespan],
        held={
            **{path: fresh(source.key) for path, source in WELL_KNOWN.items()},
            "/openapi.json": fresh(OPENAPI),
            "/auth.md": walkthrough_hit,
        },
    )
    return app


def _documents(scope: Scope) -> DocumentCache:
    """The app's documents, from the request's scope (raw ASGI handlers get no DI)."""
    documents: DocumentCache = scope["litestar_app"].state.documents
    return documents
