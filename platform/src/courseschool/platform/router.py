"""A path router in front of several ASGI apps, as the gateway is in production.

`/internal/` is refused, as the gateway refuses it. Lifespan events are fanned out
to every app, so each opens and closes its own pools.
"""

from __future__ import annotations

from collections.abc import Sequence

from litestar.types import ASGIApp, Receive, Scope, Send

from courseschool.common.asgi import AppLifespan

NOT_FOUND = b'{"error":"not_found","error_description":"no such endpoint"}'


class PathRouter:
    def __init__(self, routes: Sequence[tuple[str, ASGIApp]], default: ASGIApp) -> None:
        # Longest prefix first, so "/api/oauth/" wins over "/api/".
        self.routes = sorted(routes, key=lambda r: len(r[0]), reverse=True)
        self.default = default
        self.apps = list(dict.fromkeys([app for _, app in routes] + [default]))

    def pick(self, path: str) -> ASGIApp | None:
        if path == "/internal" or path.startswith("/internal/"):
            return None
        for prefix, app in self.routes:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                return app
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app = self.pick(scope.get("path", "/"))
        if app is None:
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": NOT_FOUND})
            return
        await app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        runners = [AppLifespan(app) for app in self.apps]
        message = await receive()
        assert message["type"] == "lifespan.startup"
        try:
            for runner in runners:
                await runner.startup()
        except Exception as exc:  # report and stop: a half-started platform must not serve
            for runner in runners:
                await runner.shutdown()
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.startup.complete"})
        message = await receive()
        for runner in reversed(runners):
            await runner.shutdown()
        await send({"type": "lifespan.shutdown.complete"})
