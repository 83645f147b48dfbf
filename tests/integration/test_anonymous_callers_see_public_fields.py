"""Security review finding 19: the anonymous public catalogue shows only public fields.
Each area declares its private fields (`AreaSpec.private_fields`); anonymous lists and
reads leave them out, callers with the area's read scope still see everything."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME, AreaSpec
from courseschool.resource_api.areas.rules import validate_document
from courseschool.resource_api.storage.items import PgItemStore

from .api_env import ApiEnv

PUBLIC = [s for s in AREA_SPECS if s.kind == "collection" and s.public]
WHEN = "2026-05-01T10:00:00Z"
# A published item of every public area, with every field filled in (private ones too).
DOCUMENTS: dict[str, dict[str, Any]] = {
    "courses": {"title": "Python", "slug": "python", "description": "d", "price": 4900, "published": True},
    "events": {
        "title": "Q&A",
        "slug": "qa",
        "starts_at": WHEN,
        "location": "Online",
        "online_url": "https://meet.example.com/secret-room",
        "capacity": 30,
        "published": True,
    },
    "membership_plans": {"name": "Pro", "slug": "pro", "price": 900, "published": True},
    "posts": {"title": "Hello", "slug": "hello", "body": "b", "excerpt": "e", "published": True},
    "digital_products": {
        "title": "Ebook",
        "slug": "ebook",
        "price": 1500,
        "file_url": "https://files.example.com/paid/ebook.pdf",
        "published": True,
    },
    "lecturers": {
        "name": "Ana Novak",
        "slug": "ana-novak",
        "bio": "b",
        "email": "ana.novak@example.test",
        "photo_url": "https://img.example.com/ana.jpg",
        "published": True,
    },
    "pages": {"title": "About", "slug": "about", "body": "b", "published": True},
}
# What must not reach anonymous callers, whatever the declarations say.
MUST_BE_PRIVATE = {"lecturers": {"email"}, "events": {"online_url"}, "digital_products": {"file_url"}}


async def insert(env: ApiEnv, spec: AreaSpec) -> dict[str, Any]:
    school_id = await env.school("acme")
    data = validate_document(spec, DOCUMENTS[spec.name])
    return await PgItemStore(env.pool).create(spec, school_id, data)


def test_every_public_area_has_a_document_here() -> None:
    assert {s.name for s in PUBLIC} == set(DOCUMENTS)


@pytest.mark.parametrize("area", sorted(MUST_BE_PRIVATE))
async def test_anonymous_callers_do_not_see_private_fields(jwt_env: ApiEnv, area: str) -> None:
    env, spec = jwt_env, BY_NAME[area]
    item = await insert(env, spec)
    listed = await env.api.get(f"/api/v1/{spec.path}")
    one = await env.api.get(f"/api/v1/{spec.path}/{item['id']}")
    filtered = await env.api.get(f"/api/v1/{spec.path}?school=acme")
    for response in (listed, one, filtered):
        assert response.status_code == 200, response.text
        for field in MUST_BE_PRIVATE[area]:
            assert field not in response.text and DOCUMENTS[area][field] not in response.text
    assert one.json()["name" if area == "lecturers" else "title"] == item["name" if area == "lecturers" else "title"]


@pytest.mark.parametrize("spec", PUBLIC, ids=lambda s: s.name)
async def test_anonymous_view_is_the_full_view_without_private_fields(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    item = await insert(env, spec)
    reader = env.bearer(await env.token(spec.read_scope))
    full = (await env.api.get(f"/api/v1/{spec.path}/{item['id']}", headers=reader)).json()
    assert full == item  # a caller with the read scope sees every field, private ones included
    listed_full = (await env.api.get(f"/api/v1/{spec.path}", headers=reader)).json()["items"]
    assert listed_full == [item]
    public = {k: v for k, v in full.items() if k not in spec.private_fields}
    assert (await env.api.get(f"/api/v1/{spec.path}/{item['id']}")).json() == public
    assert (await env.api.get(f"/api/v1/{spec.path}")).json()["items"] == [public]
