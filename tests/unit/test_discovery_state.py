"""The discovery service keeps what it makes at start-up on `app.state` (its
`Components`, `app.state.discovery`, with the documents), as the other services do,
not in a dictionary its closures share: the document routes and the front door's
lookups read the same cache there."""

from __future__ import annotations

import httpx
import msgspec

from courseschool.common.asgi import AppLifespan
from courseschool.common.settings import load_settings
from courseschool.discovery.app import WELL_KNOWN, create_app
from courseschool.discovery.documents import DocumentCache
from courseschool.discovery.settings import DiscoverySettings

BASE_URL = "http://127.0.0.1:8000"
PRM = "/.well-known/oauth-protected-resource"


def upstream(service: str) -> httpx.AsyncClient:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=msgspec.json.encode({"from": service, "path": request.url.path}))

    return httpx.AsyncClient(transport=httpx.MockTransport(answer), base_url=f"http://{service}")


async def test_the_documents_live_on_app_state() -> None:
    settings = load_settings(DiscoverySettings, environ={}, base_url=BASE_URL, internal_token="t")
    app = create_app(settings, upstreams={"authz": upstream("authz"), "resource": upstream("resource")})
    held = app.state["held_documents"][PRM]
    assert held() is None  # nothing before start-up
    async with AppLifespan(app):
        documents = app.state.discovery.documents
        assert isinstance(documents, DocumentCache)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            response = await client.get(PRM)
        assert response.json() == {"from": "resource", "path": "/internal/metadata/oauth-protected-resource"}
        assert documents.fresh(WELL_KNOWN[PRM].key) is not None  # the route filled the cache on app.state
        assert held() is documents.fresh(WELL_KNOWN[PRM].key)  # and the front door reads it there
