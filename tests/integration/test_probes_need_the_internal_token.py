"""Finding 13: the all-in-one's /healthz, /readyz and /metrics answer only an internal
caller (`Authorization: Bearer INTERNAL_TOKEN`): for anyone else they do not exist
(404, as /internal). The development `run` opens /healthz and /readyz, never /metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from courseschool.common.asgi import AppLifespan
from courseschool.platform.app import build

from .flow import BASE_URL

TOKEN = "internal-test-token-finding-13"
PROBES = ("/healthz", "/readyz", "/metrics")


@pytest.fixture(scope="module")
def shared(database_url, redis_url, kek) -> dict[str, str]:
    return {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": redis_url,
        "key_encryption_key": kek,
        "internal_token": TOKEN,
    }


async def _client(shared: dict[str, str], **options: bool) -> AsyncIterator[httpx.AsyncClient]:
    router = build(shared, **options)
    async with AppLifespan(router):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=router), base_url=BASE_URL) as client:
            yield client


@pytest.fixture(scope="module")
async def production(shared) -> AsyncIterator[httpx.AsyncClient]:
    """As platform/asgi.py builds it."""
    async for client in _client(shared):
        yield client


@pytest.fixture(scope="module")
async def development(shared) -> AsyncIterator[httpx.AsyncClient]:
    """As `python -m courseschool.platform run` builds it."""
    async for client in _client(shared, public_probes=True):
        yield client


def _refused(response: httpx.Response) -> bool:
    return response.status_code == 404 and response.json() == {
        "error": "not_found",
        "error_description": "no such endpoint",
    }


@pytest.mark.parametrize("path", PROBES)
async def test_production_probes_need_the_internal_token(production, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"X-Internal-Token": TOKEN}):
        assert _refused(await production.get(path, headers=headers)), (path, headers)
    for variant in (path.upper(), path + "/", path + "."):
        assert (await production.get(variant)).status_code == 404, variant
    answered = await production.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answered.status_code == 200, answered.text
    if path == "/metrics":
        assert "# TYPE http_requests_total counter" in answered.text
    else:
        assert answered.json()["status"] == "ok"


async def test_development_run_opens_health_and_readiness_but_not_metrics(development) -> None:
    assert (await development.get("/healthz")).json() == {"status": "ok"}
    assert (await development.get("/readyz")).json()["status"] == "ok"
    assert _refused(await development.get("/metrics"))
    assert (await development.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})).status_code == 200


async def test_without_an_internal_token_nobody_reads_the_probes(shared) -> None:
    async for client in _client({**shared, "internal_token": ""}):
        for path in PROBES:
            assert _refused(await client.get(path)), path
            assert _refused(await client.get(path, headers={"Authorization": "Bearer "})), path
