"""The CORS rules that need no server (common/cors.py): origins as browsers serialise
them, what counts as loopback, the registered set's reloading, and the front door's
refusal of a held document whose answer would depend on the origin."""

from __future__ import annotations

import asyncio

import pytest
from litestar.datastructures import State

from courseschool.common.cors import ANY_ORIGIN, CLIENT_ORIGINS, CorsRules, answer_headers, preflight_headers
from courseschool.common.origins import ClientOrigins, is_loopback_origin, origin_of
from courseschool.common.web import HeldDocuments


@pytest.mark.parametrize(
    ("uri", "origin"),
    [
        ("https://a.example/cb", "https://a.example"),
        ("https://A.Example:443/cb?x=1", "https://a.example"),
        ("https://a.example:8443/", "https://a.example:8443"),
        ("http://localhost:8080/callback", "http://localhost:8080"),
        ("http://[::1]:80/cb", "http://[::1]"),
        ("myapp://cb", None),
        ("https:///nohost", None),
        ("https://a.example:99999/", None),
    ],
)
def test_origin_of_serialises_as_browsers_do(uri: str, origin: str | None) -> None:
    assert origin_of(uri) == origin


@pytest.mark.parametrize(
    ("origin", "loopback"),
    [
        ("http://localhost", True),
        ("http://localhost:5173", True),
        ("http://127.0.0.1:8000", True),
        ("http://[::1]:3000", True),
        ("https://localhost:5173", False),  # loopback redirect URIs are http (RFC 8252 §7.3)
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.evil.example", False),
        ("http://127.0.0.2:80", False),
        ("http://localhost:0", False),
        ("http://localhost:5173/", False),  # an origin has no path
        ("null", False),
    ],
)
def test_loopback_origins(origin: str, loopback: bool) -> None:
    assert is_loopback_origin(origin) is loopback


def test_no_class_ever_allows_credentials() -> None:
    for kind in (ANY_ORIGIN, CLIENT_ORIGINS):
        for origin in ("http://localhost:1", None):
            names = {name.lower() for name in preflight_headers(kind, origin)}
            names |= {name.decode() for name, _ in answer_headers(kind, origin)}
            assert "access-control-allow-credentials" not in names


async def test_registered_origins_reload_on_a_miss_at_most_once_a_second_and_keep_the_last_good_set() -> None:
    loads: list[str] = []
    answers: list[frozenset[str] | Exception] = [frozenset({"https://a.example"})]

    async def load() -> frozenset[str]:
        loads.append("load")
        answer = answers[-1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    origins = ClientOrigins(load, ttl=60.0, miss_every=0.2)
    assert await origins.allows("https://a.example") and len(loads) == 1
    assert not await origins.allows("https://b.example") and len(loads) == 1  # loaded just now
    assert await origins.allows("https://a.example") and len(loads) == 1  # a hit loads nothing
    answers.append(frozenset({"https://a.example", "https://b.example"}))
    await asyncio.sleep(0.25)
    assert await origins.allows("https://b.example") and len(loads) == 2  # a miss, a while later
    answers.append(ConnectionError("down"))
    await asyncio.sleep(0.25)
    assert not await origins.allows("https://c.example") and len(loads) == 3
    assert await origins.allows("https://b.example")  # the last good set stays


async def test_concurrent_misses_load_once() -> None:
    loads = 0

    async def load() -> frozenset[str]:
        nonlocal loads
        loads += 1
        await asyncio.sleep(0.05)
        return frozenset({"https://a.example"})

    origins = ClientOrigins(load)
    assert all(await asyncio.gather(*(origins.allows("https://a.example") for _ in range(20))))
    assert loads == 1


def test_a_held_document_must_not_depend_on_the_origin() -> None:
    class App:
        state = State(
            {
                "service_name": "x",
                "held_documents": {"/p": lambda: None},
                "cors": CorsRules(paths={"/p": CLIENT_ORIGINS}),
            }
        )

    with pytest.raises(ValueError, match="depends on the origin"):
        HeldDocuments(App(), [App()])  # type: ignore[arg-type]
