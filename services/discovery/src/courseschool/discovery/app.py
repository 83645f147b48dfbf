"""The discovery service's composition root: the Litestar app, its routes (the
well-known documents, the merged OpenAPI document and the walkthrough, each served as
pre-serialised bytes with an ETag), and the `Components` built once at start-up
(components.py), kept on `app.state.discovery`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import msgspec
from litestar import Litestar, asgi
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send

from courseschool.common.cors import ANY_ORIGIN, CorsRules
from courseschool.common.http import Held
from courseschool.common.metrics import CACHE
from courseschool.common.raw import send_document
from courseschool.common.server_versions import check_servers
from courseschool.common.web import HeldLookup, service_app

from .components import Components
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
# Every document here is public and the same for everyone: any origin reads it (common/cors.py).
CORS = CorsRules(paths=dict.fromkeys([*WELL_KNOWN, "/openapi.json", "/auth.md"], ANY_ORIGIN))


def create_app(settings: DiscoverySettings, *, upstreams: dict[str, httpx.AsyncClient] | None = None) -> Litestar:
    """`upstreams` reach the other services' internal endpoints by name ("authz",
    "resource"); by default over HTTP at their internal URLs, in the all-in-one process
    straight to their apps."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        components = Components.build(settings, upstreams)
        try:
            await check_servers(None, components.redis)  # an older Redis than the supported range: no start
            app.state.discovery = components
            yield
        finally:
            await components.close()

    def fresh(key: str) -> HeldLookup:
        """What the front door (`common.web.HeldDocuments`) sends while it is fresh; the
        routes below fetch it again once its time is up. Nothing before start-up."""

        def lookup() -> Held | None:
            discovery: Components | None = app.state.get("discovery")
            return discovery.documents.fresh(key) if discovery is not None else None

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

    auth_md, walkthrough_hit = _walkthrough(settings.base_url)

    async def check_upstreams() -> None:
        for source in WELL_KNOWN.values():
            await app.state.discovery.documents.get(source)

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
        cors=CORS,
    )
    return app


def _walkthrough(base_url: str) -> tuple[ASGIRouteHandler, HeldLookup]:
    """`/auth.md`, rendered once: its route, and the front door's lookup of the same bytes."""
    walkthrough = make_document(render_walkthrough(base_url), "text/markdown; charset=utf-8")
    hits = CACHE.labels("walkthrough", "hit")

    def hit() -> Held:
        hits.inc()
        return walkthrough

    @asgi("/auth.md", copy_scope=False)
    async def auth_md(scope: Scope, receive: Receive, send: Send) -> None:
        await send_document(scope, send, hit())

    return auth_md, hit


def _documents(scope: Scope) -> DocumentCache:
    """The app's documents, from the request's scope (raw ASGI handlers get no DI)."""
    discovery: Components = scope["litestar_app"].state.discovery
    return discovery.documents
