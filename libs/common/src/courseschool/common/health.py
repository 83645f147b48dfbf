"""`/healthz` and `/readyz`, which every service has (`web.service_app` adds them): the
process is alive; every ready check passes, each answering "ok" or why not, with what
it knows (the schema versions, `schema.py`) in the body under its name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
from litestar import Response, get

from .answers import NO_STORE

ReadyCheck = Callable[[], Awaitable[object]]


class NotReady(Exception):
    """A ready check's own answer: `reason` is its entry under `checks`, `details` (JSON)
    goes into the body under the check's name. Any other exception reads as the
    dependency being unavailable."""

    def __init__(self, reason: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = dict(details or {})


def health_handlers(checks: dict[str, ReadyCheck]) -> list[Any]:
    """`/healthz`: the process is alive. `/readyz`: every check passes. A check that
    returns a mapping has it put into the body under its name (the schema versions)."""

    @get("/healthz", include_in_schema=False)
    async def healthz() -> Response[bytes]:
        return Response(b'{"status":"ok"}', media_type="application/json", headers=NO_STORE)

    @get("/readyz", include_in_schema=False)
    async def readyz() -> Response[bytes]:
        results: dict[str, str] = {}
        details: dict[str, Any] = {}
        for name, check in checks.items():
            try:
                found = await check()
                results[name] = "ok"
                if isinstance(found, Mapping):
                    details[name] = dict(found)
            except NotReady as exc:
                results[name] = exc.reason
                details[name] = exc.details
            except Exception as exc:  # noqa: BLE001 - any failure means not ready
                results[name] = f"unavailable: {type(exc).__name__}"
        ready = all(v == "ok" for v in results.values())
        body = msgspec.json.encode({"status": "ok" if ready else "unavailable", "checks": results, **details})
        return Response(body, status_code=200 if ready else 503, media_type="application/json", headers=NO_STORE)

    return [healthz, readyz]
