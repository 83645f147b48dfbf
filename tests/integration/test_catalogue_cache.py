"""The anonymous catalogue's pages are kept briefly and may be cached by clients; a
write through the API shows at once; nothing a token can see is kept."""

from __future__ import annotations

from courseschool.common.metrics import CACHE

from .api_env import ApiEnv


def _hits() -> float:
    return CACHE.labels("catalogue", "hit")._value.get()


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
