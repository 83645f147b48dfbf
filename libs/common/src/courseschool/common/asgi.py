"""Running an ASGI app's lifespan from code: the all-in-one router starts its three
apps with it, and tests start an app in their own event loop."""

from __future__ import annotations

import asyncio
from typing import Any

from litestar.types import ASGIApp


class AppLifespan:
    """Drives one ASGI app's lifespan protocol: `await startup()`, later `await shutdown()`."""

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

    async def __aenter__(self) -> AppLifespan:
        await self.startup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
