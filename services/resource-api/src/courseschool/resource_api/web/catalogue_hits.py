"""Anonymous reads of a public area's list answered from the catalogue cache
(`catalogue.py`) before the route's handler runs.

The anonymous catalogue is the resource API's most read path, and once a page is held
its handler's work is the framework's: resolving the dependencies, checking the
signature, building the response, several times the cost of the page lookup (the
bench's anonymous read, bench/RESULTS.md). This route middleware sends a held page
with the handler's own headers, after the same reading of the request: no
`Authorization` header (`presented_token`, as the guard reads it) and the same parsed
query (`list_query`), which is the cache's key. Anything else goes on to the handler,
unchanged: a token, a malformed header, a query the handler refuses, a page not held
(the handler reads it and fills the cache). It runs inside the app's middleware, so
the request id, the log line and the metrics are the same as the handler's.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.types import ASGIApp, HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send

from courseschool.common.bearer import presented_token
from courseschool.common.errors import PlatformError

from ..catalogue import cache_control
from ..components import Components
from .query import list_query


class CatalogueHits:
    def __init__(self, app: ASGIApp, area: str) -> None:
        self.app = app
        self.area = area

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        resource_api: Components = scope["litestar_app"].state.resource_api  # middleware gets no DI
        page = self._held(Request(scope), resource_api)
        if page is None:
            await self.app(scope, receive, send)
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"cache-control", cache_control(resource_api.settings.catalogue_cache_ttl).encode()),
            (b"content-length", str(len(page)).encode()),
        ]
        await send(HTTPResponseStartEvent(type="http.response.start", status=200, headers=headers))
        await send(HTTPResponseBodyEvent(type="http.response.body", body=page, more_body=False))

    def _held(self, request: Request[Any, Any, Any], resource_api: Components) -> bytes | None:
        try:
            if presented_token(request.headers.get("authorization")) is not None:
                return None
            query = list_query(request, resource_api.settings)
        except PlatformError:  # the handler answers it, with its error
            return None
        return resource_api.catalogue.held(self.area, query)
