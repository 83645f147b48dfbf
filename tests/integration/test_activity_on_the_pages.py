"""The person and the school's owner see what an app did: the connected-apps page shows,
per sign-in, the reads per area and the changes of the last 30 days (the changed items by
name, newest first) and when it last acted; the school's apps page shows the same per
person. When the resource API cannot answer, the pages say so and show the rest."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from .api_env import ApiEnv
from .flow import csrf_of


@pytest.fixture
async def env(open_api_env: Callable[..., AbstractAsyncContextManager[Any]]) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


async def _sign_in(env: ApiEnv, email: str, next_page: str) -> None:
    flow = env.flow
    flow.client.cookies.clear()
    form = await flow.client.get(f"/oauth/signin?next={next_page}")
    done = await flow.client.post(
        "/oauth/signin",
        data={
            "csrf": csrf_of(form.text),
            "email": email,
            "password": "correct horse battery staple",
            "next": next_page,
        },
    )
    assert done.status_code == 303, done.text


async def _an_agent_at_work(env: ApiEnv) -> tuple[dict[str, str], str]:
    """A lecturer's agent reads courses three times and students once, and adds a
    course; the counts flushed and drained. (The lecturer, the owner's email.)"""
    school = await env.school("busy")
    owner = await env.flow.user("owner", school=school)
    lecturer = await env.flow.user("lecturer", school=school)
    env.reg = await env.flow.register(client_name="Busy Agent")
    env.flow.client.cookies.clear()
    tokens = await env.flow.tokens(env.reg, lecturer, scope="openid courses:read courses:write students:read")
    bearer = env.bearer(tokens["access_token"])
    for _ in range(3):
        assert (await env.api.get("/api/v1/courses", headers=bearer)).status_code == 200
    assert (await env.api.get("/api/v1/students", headers=bearer)).status_code == 200
    made = await env.api.post(
        "/api/v1/courses", headers=bearer, json={"title": "Watercolour for beginners", "slug": "watercolour"}
    )
    assert made.status_code == 201, made.text
    await env.rs_app.state.resource_api.activity.run_once()
    return lecturer, owner["email"]


async def test_the_person_sees_what_each_sign_in_did(env: ApiEnv) -> None:
    lecturer, _ = await _an_agent_at_work(env)
    await _sign_in(env, lecturer["email"], "/oauth/apps")
    page = await env.flow.client.get("/oauth/apps")
    assert page.status_code == 200
    text = page.text
    assert "In the last 30 days" in text
    assert "read courses 3 times, students once" in text
    assert "changed 1 (1 in courses)" in text
    assert "added in courses «Watercolour for beginners»" in text
    assert "Last acted" in text


async def test_the_owner_sees_what_the_app_did_per_person(env: ApiEnv) -> None:
    lecturer, owner_email = await _an_agent_at_work(env)
    await _sign_in(env, owner_email, "/oauth/school/apps")
    page = await env.flow.client.get("/oauth/school/apps")
    assert page.status_code == 200
    assert "Busy Agent" in page.text and lecturer["email"] in page.text
    assert "read courses 3 times, students once" in page.text
    assert "Watercolour for beginners" in page.text


async def test_without_the_resource_api_the_page_says_so_and_shows_the_rest(env: ApiEnv) -> None:
    lecturer, _ = await _an_agent_at_work(env)
    await _sign_in(env, lecturer["email"], "/oauth/apps")

    async def unavailable(scope: Any, receive: Any, send: Any) -> None:  # the resource API, down behind a proxy
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    env.resource_link.app = unavailable
    page = await env.flow.client.get("/oauth/apps")
    assert page.status_code == 200
    assert "Busy Agent" in page.text and "not available right now" in page.text
