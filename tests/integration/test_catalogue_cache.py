"""The anonymous catalogue's pages are kept briefly and may be cached by clients; a
write through the API shows at once; nothing a token can see is kept."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client import REGISTRY

from courseschool.resource_api.areas.registry import AreaSpec
from courseschool.resource_api.service import ListQuery, ResourceService

from .api_env import ApiEnv


def _hits() -> float:
    return REGISTRY.get_sample_value("cache_requests_total", {"cache": "catalogue", "result": "hit"}) or 0.0


async def test_anonymous_pages_are_kept_and_say_so(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("courses:write courses:read")
    await env.api.post(
        "/api/v1/courses", json={"title": "A", "slug": "a", "published": True}, headers=env.bearer(token)
    )
    first = await env.api.get("/api/v1/courses", params={"school": "acme"})
    assert first.status_code == 200 and first.headers["cache-control"] == "public, max-age=2"
    before = _hits()
    again = await env.api.get("/api/v1/courses", params={"school": "acme"})
    assert again.content == first.content and _hits() == before + 1


async def test_a_write_through_the_api_shows_to_the_next_anonymous_read(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("courses:write courses:read")
    empty = await env.api.get("/api/v1/courses", params={"school": "acme"})
    assert empty.json()["items"] == []
    made = await env.api.post(
        "/api/v1/courses", json={"title": "A", "slug": "a", "published": True}, headers=env.bearer(token)
    )
    listed = await env.api.get("/api/v1/courses", params={"school": "acme"})
    assert [c["id"] for c in listed.json()["items"]] == [made.json()["id"]]
    await env.api.patch(f"/api/v1/courses/{made.json()['id']}", json={"title": "B"}, headers=env.bearer(token))
    assert (await env.api.get("/api/v1/courses", params={"school": "acme"})).json()["items"][0]["title"] == "B"
    await env.api.delete(f"/api/v1/courses/{made.json()['id']}", headers=env.bearer(token))
    assert (await env.api.get("/api/v1/courses", params={"school": "acme"})).json()["items"] == []


async def test_reads_with_a_token_are_never_kept(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("courses:read")
    answer = await env.api.get("/api/v1/courses", headers=env.bearer(token))
    assert answer.status_code == 200 and "public" not in answer.headers.get("cache-control", "")
    before = _hits()
    await env.api.get("/api/v1/courses", headers=env.bearer(token))
    assert _hits() == before


def _counting_catalogue(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The areas whose catalogue the handler was asked for."""
    calls: list[str] = []
    catalogue = ResourceService.catalogue

    async def counted(self: ResourceService, spec: AreaSpec, query: ListQuery) -> bytes:
        calls.append(spec.name)
        return await catalogue(self, spec, query)

    monkeypatch.setattr(ResourceService, "catalogue", counted)
    return calls


def _headers(answer: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in answer.headers.items() if k not in ("x-request-id", "date")}


async def test_a_held_page_is_sent_before_the_handler_with_its_headers(
    jwt_env: ApiEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = jwt_env
    await env.token("courses:read")  # the school exists from the first sign-in
    calls = _counting_catalogue(monkeypatch)
    first = await env.api.get("/api/v1/courses", params={"school": "acme", "limit": "5"})
    assert first.status_code == 200 and calls == ["courses"]
    before = _hits()
    # The same parsed query in another order: the same page, answered by CatalogueHits.
    again = await env.api.get("/api/v1/courses?limit=5&school=acme")
    assert calls == ["courses"] and _hits() == before + 1
    assert (again.status_code, again.content, _headers(again)) == (200, first.content, _headers(first))
    assert again.headers["x-request-id"] and again.headers["x-request-id"] != first.headers["x-request-id"]


async def test_what_the_handler_must_answer_passes_a_held_page_by(
    jwt_env: ApiEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = jwt_env
    token = await env.token("courses:read")
    await env.api.get("/api/v1/courses", params={"school": "acme"})  # held from here on
    calls = _counting_catalogue(monkeypatch)
    before = _hits()
    malformed = await env.api.get(
        "/api/v1/courses", params={"school": "acme"}, headers={"Authorization": "Bearer two words"}
    )
    assert malformed.status_code == 401 and malformed.json()["error"] == "invalid_token"
    with_token = await env.api.get("/api/v1/courses", params={"school": "acme"}, headers=env.bearer(token))
    assert with_token.status_code == 200 and "public" not in with_token.headers.get("cache-control", "")
    refused = await env.api.get("/api/v1/courses", params={"school": "acme", "limit": "0"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_request"
    assert _hits() == before and calls == []  # each went on to the handler: none was a catalogue hit
