"""A path router in front of several ASGI apps, as the gateway is in production.

The path is checked before it is routed, from both its decoded form (what the apps
route on) and the raw one: a path that components could read differently names no
endpoint (404; every path the OpenAPI document describes may answer 404): a `.` or `..`
segment, an empty segment such as `//internal`, which the apps would route as
`/internal`, an encoded slash or backslash, a backslash or a control character.
`/internal/` is refused (404), as the gateway refuses it, compared without regard to
case or trailing dots. `/healthz`, `/readyz` and `/metrics` answer only with
the internal token (`Authorization: Bearer INTERNAL_TOKEN`; 404 otherwise), except
that `public_probes` opens /healthz and /readyz (the development `run`). Lifespan events
are fanned out to every app, so each opens and closes its own pools.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    LifeSpanReceive,
    LifeSpanSend,
    Receive,
    Scope,
    Send,
)

from courseschool.common.asgi import AppLifespan
from courseschool.common.secrets import same

NOT_FOUND = b'{"error":"not_found","error_description":"no such endpoint"}'
AMBIGUOUS = (
    b'{"error":"not_found","error_description":"no such endpoint: the request path is ambiguous (dot or '
    b'empty segments, encoded slashes, backslashes and control characters are refused)"}'
)
PROBES = ("healthz", "readyz", "metrics")
OPEN_PROBES = ("healthz", "readyz")  # with public_probes
_ENCODED_SEPARATORS = (b"%2f", b"%5c")
_BACKSLASH_OR_CONTROL = re.compile(r"[\\\x00-\x1f\x7f]")  # one C-level scan per request


def first_segment(path: str, raw_path: bytes | None) -> str | None:
    """The path's first segment, lower-cased, without trailing dots; None if the path is
    ambiguous (see the module's docstring)."""
    raw = (raw_path or b"").partition(b"?")[0].lower()  # some clients put the query in raw_path
    if any(encoded in raw for encoded in _ENCODED_SEPARATORS):
        return None
    if not path.startswith("/") or _BACKSLASH_OR_CONTROL.search(path):
        return None
    segments = path[1:].split("/")
    if any(seg in (".", "..") for seg in segments) or "" in segments[:-1]:
        return None
    return segments[0].lower().rstrip(".")


class PathRouter:
    def __init__(
        self,
        routes: Sequence[tuple[str, ASGIApp]],
        default: ASGIApp,
        *,
        internal_token: str | None,
        public_probes: bool = False,
    ) -> None:
        # Longest prefix first, so "/api/oauth/" wins over "/api/".
        self.routes = sorted(routes, key=lambda r: len(r[0]), reverse=True)
        self.default = default
        self.apps = list(dict.fromkeys([app for _, app in routes] + [default]))
        self._probe_credential = f"Bearer {internal_token}".encode() if internal_token else None
        self._open_probes = OPEN_PROBES if public_probes else ()

    def pick(self, scope: Scope) -> ASGIApp | bytes:
        """The app for this request, or the body of the 404 that refuses it."""
        path: str = scope.get("path", "/")
        first = first_segment(path, scope.get("raw_path"))
        if first is None:
            return AMBIGUOUS
        if first == "internal":
            return NOT_FOUND
        if first in PROBES:
            return self.default if first in self._open_probes or self._internal_caller(scope) else NOT_FOUND
        for prefix, app in self.routes:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                return app
        return self.default

    def _internal_caller(self, scope: Scope) -> bool:
        given = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        return self._probe_credential is not None and same(given, self._probe_credential)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind: str = scope["type"]  # Litestar's Scope leaves out lifespan scopes, which a router gets too
        if kind == "lifespan":
            await self._lifespan(cast(Any, receive), cast(Any, send))
            return
        app = self.pick(scope)
        if isinstance(app, bytes):
            headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
            await send(HTTPResponseStartEvent(type="http.response.start", status=404, headers=headers))
            await send(HTTPResponseBodyEvent(type="http.response.body", body=app, more_body=False))
            return
        await app(scope, receive, send)

    async def _lifespan(self, receive: LifeSpanReceive, send: LifeSpanSend) -> None:
        runners = [AppLifespan(app) for app in self.apps]
        message = await receive()
        assert message["type"] == "lifespan.startup"
        try:
            for runner in runners:
                await runner.startup()
        except Exception as exc:  # noqa: BLE001 - report and stop: a half-started platform must not serve
            for runner in runners:
                await runner.shutdown()
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.startup.complete"})
        message = await receive()
        for runner in reversed(runners):
            await runner.shutdown()
        await send({"type": "lifespan.shutdown.complete"})
