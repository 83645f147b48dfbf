"""A path router in front of several ASGI apps, as the gateway is in production.

`/internal/` is refused, as the gateway refuses it. Lifespan events are fanned out
to every app, so each opens and closes its own pools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from litestar.types import ASGIApp, Receive, Scope, Send

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
        runners = [_AppLifespan(app) for app in self.apps]
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


class _AppLifespan:
    """Drives one app's lifespan protocol from the router."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.from_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.started = False

    async def startup(self) -> None:
        self.task = asyncio.create_task(
            self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, self.to_app.get, self.from_app.put)  # type: ignore[arg-type]
        )
        await self.to_app.put({"type": "lifespan.startup"})
        reply = await self.from_app.get()
        if reply["type"] != "lifespan.startup.complete":
            raise RuntimeError(reply.get("message") or "an app failed to start")
        self.started = True

    async def shutdown(self) -> None:
        if self.task is None:
            return
        if self.started:
            await self.to_app.put({"type": "lifespan.shutdown"})
            await self.from_app.get()
        await asyncio.wait([self.task], timeout=5)
        self.task = None
