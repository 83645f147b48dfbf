"""Finding 12: the all-in-one router refuses `/internal` however the path is written.

Each request is given to the router as a server gives it (`path` percent-decoded,
`raw_path` as sent), with the right internal token, at a route that answers 200 to such
a caller: any variant the router let through would be served."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote

import pytest

from courseschool.common.asgi import AppLifespan
from courseschool.platform.app import build
from courseschool.platform.router import PathRouter

from .flow import BASE_URL

TOKEN = "internal-test-token-finding-12"
TARGET = "/internal/metadata/oauth-authorization-server"


@pytest.fixture(scope="module")
async def router(database_url, redis_url, kek) -> AsyncIterator[PathRouter]:
    shared = {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": redis_url,
        "key_encryption_key": kek,
        "internal_token": TOKEN,
    }
    built = build(shared)
    async with AppLifespan(built):
        yield built


async def call(app: Any, raw: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """GET `raw` (the request target as a client sends it) through `app`."""
    raw_path, _, query = raw.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(raw_path),
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body or b"null")


INSIDER = {"Authorization": f"Bearer {TOKEN}"}

AMBIGUOUS = [
    "//internal/metadata/oauth-authorization-server",  # Litestar skips empty segments
    "///internal/metadata/oauth-authorization-server",
    "/./internal/metadata/oauth-authorization-server",
    "/internal/../internal/metadata/oauth-authorization-server",
    "/oauth/../internal/metadata/oauth-authorization-server",
    "/internal/metadata/./oauth-authorization-server",
    "/internal//metadata/oauth-authorization-server",
    "/%2finternal/metadata/oauth-authorization-server",  # decoded: //internal/...
    "/%2Finternal/metadata/oauth-authorization-server",
    "/oauth%2f..%2finternal/metadata/oauth-authorization-server",
    "/%2e/internal/metadata/oauth-authorization-server",  # decoded: /./internal/...
    "/%2e%2e/internal/metadata/oauth-authorization-server",
    "/oauth%5c..%5cinternal/metadata/oauth-authorization-server",
    "/oauth\\..\\internal/metadata/oauth-authorization-server",
    "/internal/metadata/oauth-authorization-server/.",
    "/internal%00/metadata/oauth-authorization-server",
    "/internal%1f/metadata/oauth-authorization-server",  # the last C0 control character
    "/internal%7f/metadata/oauth-authorization-server",  # DEL
    "/api/v1/courses%0a",
    "/api/v1//courses",  # not /internal, but ambiguous all the same
]
NOT_FOUND = [
    TARGET,
    "/internal",
    "/internal/",
    "/%69nternal/metadata/oauth-authorization-server",  # decoded by the server: /internal/...
    "/%69%6e%74%65%72%6e%61%6c/metadata/oauth-authorization-server",
    "/INTERNAL/metadata/oauth-authorization-server",
    "/Internal/metadata/oauth-authorization-server",
    "/internal./metadata/oauth-authorization-server",
    "/internal../metadata/oauth-authorization-server",
    "/INTERNAL./metadata/oauth-authorization-server",
]


@pytest.mark.parametrize("raw", AMBIGUOUS)
async def test_ambiguous_paths_name_no_endpoint(router: PathRouter, raw: str) -> None:
    status, body = await call(router, raw, INSIDER)
    assert status == 404 and body["error"] == "not_found", (raw, status, body)
    assert "ambiguous" in body["error_description"]


@pytest.mark.parametrize("raw", NOT_FOUND)
async def test_internal_in_any_spelling_is_not_found(router: PathRouter, raw: str) -> None:
    status, body = await call(router, raw, INSIDER)
    assert status == 404 and body == {"error": "not_found", "error_description": "no such endpoint"}, (raw, body)


async def test_the_apps_themselves_would_serve_the_target(router: PathRouter) -> None:
    """What the refusals above protect: the app behind the router answers an internal
    caller at the target, and would also at `//internal/...`."""
    authz = router.default
    assert (await call(authz, TARGET, INSIDER))[0] == 200
    assert (await call(authz, "//internal/metadata/oauth-authorization-server", INSIDER))[0] == 200


async def test_ordinary_paths_still_route(router: PathRouter) -> None:
    for raw in ("/.well-known/oauth-authorization-server", "/api/oauth/jwks"):
        assert (await call(router, raw))[0] == 200, raw
    # Encoded slashes and dots in the query are not the path's: the resource API answers.
    status, body = await call(router, "/api/v1/courses?school=nowhere&next=http%3A%2F%2Fh%2F..%2F%2e%2e%0a")
    assert (status, body["error_description"]) == (404, "no such school")
    # A trailing slash is no empty segment inside the path.
    assert await call(router, "/api/v1/courses/") == await call(router, "/api/v1/courses")
