"""The resource API: every area behind the scope guard, tenancy, the anonymous
catalogue, pagination, validation, singletons, analytics and uploads."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME, AreaSpec
from courseschool.resource_api.areas.rules import validate_document

from .api_env import ApiEnv
from .flow import BASE_URL

COLLECTIONS = [s for s in AREA_SPECS if s.kind == "collection"]
WRITABLE = [s for s in COLLECTIONS if s.writable]
READ_ONLY = [s for s in COLLECTIONS if not s.writable]
PUBLIC = [s for s in COLLECTIONS if s.public]
PRIVATE = [s for s in COLLECTIONS if not s.public]
METADATA = f'resource_metadata="{BASE_URL}/.well-known/oauth-protected-resource"'
ID = "3f1e2d3c-4b5a-4678-9abc-def012345678"


def sample(spec: AreaSpec, n: int = 0, **overrides: Any) -> dict[str, Any]:
    """A valid document for each area (n makes unique fields unique)."""
    when = "2026-05-01T10:00:00Z"
    docs: dict[str, dict[str, Any]] = {
        "courses": {"title": f"Course {n}", "slug": f"course-{n}", "price": 4900, "published": True},
        "students": {
            "name": f"Student {n}",
            "email": f"student{n}@example.test",
            "enrollments": [{"course_id": ID, "enrolled_at": when}],
        },
        "members": {"name": f"Member {n}", "email": f"member{n}@example.test"},
        "curriculum": {
            "course_id": str(uuid.UUID(int=n + 1)),
            "sections": [{"title": "Intro", "lessons": [{"title": "Hello"}]}],
        },
        "orders": {
            "number": f"A-{n}",
            "customer_email": "c@example.test",
            "subtotal": 100,
            "total": 100,
            "items": [{"product_type": "course", "product_id": ID, "title": "X", "unit_price": 100}],
        },
        "events": {"title": f"Event {n}", "slug": f"event-{n}", "starts_at": when, "published": True},
        "membership_plans": {"name": f"Plan {n}", "slug": f"plan-{n}", "price": 900, "published": True},
        "coupons": {"code": f"SAVE{n}", "amount": 10},
        "posts": {"title": f"Post {n}", "slug": f"post-{n}", "published": True},
        "subscriptions": {"member_id": ID, "plan_id": ID},
        "digital_products": {"title": f"Ebook {n}", "slug": f"ebook-{n}", "price": 1500, "published": True},
        "comments": {"target_type": "course", "target_id": ID, "author_name": "Ann", "body": "Nice"},
        "lecturers": {"name": f"Lecturer {n}", "slug": f"lecturer-{n}", "published": True},
        "forms": {"title": f"Form {n}", "fields": [{"name": "email", "label": "Email", "type": "email"}]},
        "pages": {"title": f"Page {n}", "slug": f"page-{n}", "published": True},
    }
    return {**docs[spec.name], **overrides}


async def insert(env: ApiEnv, spec: AreaSpec, school: str, n: int = 0, **overrides: Any) -> dict[str, Any]:
    """Store an item directly (read-only areas have no write route)."""
    from courseschool.resource_api.storage.items import PgItemStore

    school_id = await env.school(school)
    return await PgItemStore(env.pool).create(spec, school_id, validate_document(spec, sample(spec, n, **overrides)))


@pytest.fixture(params=["jwt", "introspection"])
async def env(request, open_api_env) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode=request.param) as running:
        yield running


# -- the scope guard --------------------------------------------------------------------


@pytest.mark.parametrize("spec", WRITABLE, ids=lambda s: s.name)
async def test_write_needs_the_write_scope_and_read_the_read_scope(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    writer = await env.token(f"{spec.name}:write")
    created = await env.api.post(f"/api/v1/{spec.path}", json=sample(spec), headers=env.bearer(writer))
    assert created.status_code == 201, created.text
    item = created.json()
    assert created.headers["location"] == f"/api/v1/{spec.path}/{item['id']}"
    denied = await env.api.get(f"/api/v1/{spec.path}/{item['id']}", headers=env.bearer(writer))
    assert denied.status_code == 403
    assert denied.json()["error"] == "insufficient_scope" and denied.json()["scope"] == spec.read_scope
    assert f'scope="{spec.read_scope}"' in denied.headers["www-authenticate"]
    assert METADATA in denied.headers["www-authenticate"]
    reader = await env.token(f"{spec.name}:read")
    got = await env.api.get(f"/api/v1/{spec.path}/{item['id']}", headers=env.bearer(reader))
    assert got.status_code == 200 and got.json() == item
    refused = await env.api.post(f"/api/v1/{spec.path}", json=sample(spec, 1), headers=env.bearer(reader))
    assert refused.status_code == 403 and refused.json()["scope"] == spec.write_scope
    changed = await env.api.patch(f"/api/v1/{spec.path}/{item['id']}", json={}, headers=env.bearer(writer))
    assert changed.status_code == 200
    gone = await env.api.delete(f"/api/v1/{spec.path}/{item['id']}", headers=env.bearer(writer))
    assert gone.status_code == 204
    assert (await env.api.get(f"/api/v1/{spec.path}/{item['id']}", headers=env.bearer(reader))).status_code == 404


@pytest.mark.parametrize("spec", READ_ONLY, ids=lambda s: s.name)
async def test_read_only_areas_can_be_read_but_not_written(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    await insert(env, spec, "acme")
    token = await env.token(f"{spec.name}:read")
    listed = await env.api.get(f"/api/v1/{spec.path}", headers=env.bearer(token))
    assert listed.status_code == 200 and len(listed.json()["items"]) == 1
    refused = await env.api.post(f"/api/v1/{spec.path}", json=sample(spec, 1), headers=env.bearer(token))
    assert refused.status_code == 405 and refused.json()["error"] == "method_not_allowed"
    assert await env.pool.fetchval("SELECT count(*) FROM api_items WHERE area = $1", spec.name) == 1


# -- tenancy ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", COLLECTIONS, ids=lambda s: s.name)
async def test_other_schools_data_does_not_exist(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    theirs = (
        await insert(env, spec, "other-school", published=False)
        if spec.has_published
        else await insert(env, spec, "other-school")
    )
    scope = f"{spec.name}:read" + (f" {spec.name}:write" if spec.writable else "")
    mine = await env.token(scope, school="acme")
    listed = await env.api.get(f"/api/v1/{spec.path}", headers=env.bearer(mine))
    assert listed.json()["items"] == []
    assert (await env.api.get(f"/api/v1/{spec.path}/{theirs['id']}", headers=env.bearer(mine))).status_code == 404
    if spec.writable:
        patched = await env.api.patch(f"/api/v1/{spec.path}/{theirs['id']}", json={}, headers=env.bearer(mine))
        deleted = await env.api.delete(f"/api/v1/{spec.path}/{theirs['id']}", headers=env.bearer(mine))
        assert patched.status_code == 404 and deleted.status_code == 404
    assert await env.pool.fetchval("SELECT count(*) FROM api_items WHERE id = $1::uuid", theirs["id"]) == 1


# -- the anonymous catalogue ----------------------------------------------------------------


@pytest.mark.parametrize("spec", PUBLIC, ids=lambda s: s.name)
async def test_anonymous_reads_published_items_of_public_areas(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    shown = await insert(env, spec, "acme", 1, published=True)
    hidden = await insert(env, spec, "acme", 2, published=False)
    elsewhere = await insert(env, spec, "other-school", 3, published=True)
    everything = await env.api.get(f"/api/v1/{spec.path}")
    assert everything.status_code == 200
    assert [i["id"] for i in everything.json()["items"]] == [shown["id"], elsewhere["id"]]
    filtered = await env.api.get(f"/api/v1/{spec.path}?school=acme")
    assert [i["id"] for i in filtered.json()["items"]] == [shown["id"]]
    assert (await env.api.get(f"/api/v1/{spec.path}/{shown['id']}")).status_code == 200
    assert (await env.api.get(f"/api/v1/{spec.path}/{hidden['id']}")).status_code == 404
    assert (await env.api.get(f"/api/v1/{spec.path}?school=no-such-school")).status_code == 404
    assert "www-authenticate" not in everything.headers


@pytest.mark.parametrize("spec", PRIVATE, ids=lambda s: s.name)
async def test_anonymous_is_refused_elsewhere_without_a_challenge(jwt_env: ApiEnv, spec: AreaSpec) -> None:
    env = jwt_env
    item = await insert(env, spec, "acme")
    for response in (await env.api.get(f"/api/v1/{spec.path}"), await env.api.get(f"/api/v1/{spec.path}/{item['id']}")):
        assert response.status_code == 403
        assert response.json()["error"] == "access_denied"
        assert "www-authenticate" not in response.headers


@pytest.mark.parametrize("path", ["school", "appearance", "account", "analytics"])
async def test_anonymous_cannot_read_singletons_or_analytics(jwt_env: ApiEnv, path: str) -> None:
    response = await jwt_env.api.get(f"/api/v1/{path}")
    assert response.status_code == 403 and "www-authenticate" not in response.headers


async def test_anonymous_cannot_upload(jwt_env: ApiEnv) -> None:
    response = await jwt_env.api.post("/api/v1/storage/files", files={"file": ("a.txt", b"hello", "text/plain")})
    assert response.status_code == 403


# -- pagination and filters ---------------------------------------------------------------


async def test_lists_paginate_with_an_opaque_cursor(jwt_env: ApiEnv) -> None:
    env = jwt_env
    spec = BY_NAME["courses"]
    ids = [(await insert(env, spec, "acme", n))["id"] for n in range(5)]
    token = await env.token("courses:read")
    seen: list[str] = []
    cursor = None
    for _ in range(3):
        url = "/api/v1/courses?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = (await env.api.get(url, headers=env.bearer(token))).json()
        seen += [i["id"] for i in page["items"]]
        cursor = page["next_cursor"]
    assert seen == ids and cursor is None


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=abc",
        "cursor=not-a-cursor",
        "cursor=WyJ4Il0",
        "published=maybe",
        "updated_since=yesterday",
        "updated_since=2026-01-01T00:00:00",
    ],
)
async def test_bad_list_parameters_are_invalid_request(jwt_env: ApiEnv, query: str) -> None:
    token = await jwt_env.token("courses:read")
    response = await jwt_env.api.get(f"/api/v1/courses?{query}", headers=jwt_env.bearer(token))
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


async def test_published_and_updated_since_filters(jwt_env: ApiEnv) -> None:
    env = jwt_env
    spec = BY_NAME["posts"]
    await insert(env, spec, "acme", 1, published=True)
    draft = await insert(env, spec, "acme", 2, published=False)
    token = await env.token("posts:read")
    drafts = (await env.api.get("/api/v1/posts?published=false", headers=env.bearer(token))).json()["items"]
    assert [i["id"] for i in drafts] == [draft["id"]]
    future = (await env.api.get("/api/v1/posts?updated_since=2999-01-01", headers=env.bearer(token))).json()["items"]
    assert future == []


async def test_a_new_item_was_updated_when_it_was_created(jwt_env: ApiEnv) -> None:
    """Both stamps of a created item are one instant (they once came from two clock
    readings, a microsecond apart now and then)."""
    env = jwt_env
    spec = BY_NAME["courses"]
    writer = await env.token("courses:write")
    for n in range(40):
        created = await env.api.post("/api/v1/courses", json=sample(spec, n), headers=env.bearer(writer))
        assert created.status_code == 201, created.text
        assert created.json()["created_at"] == created.json()["updated_at"]


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"title": "A", "slug": "a", "surprise": 1}, 422, "validation_failed"),
        ({"title": "A", "slug": "a", "price": "49"}, 422, "validation_failed"),
        ({"title": "A", "slug": "a", "price": -1}, 422, "validation_failed"),
        ({"title": "A", "slug": "Not A Slug"}, 422, "validation_failed"),
        ({"slug": "a"}, 422, "validation_failed"),
        ([1, 2], 400, "invalid_request"),
    ],
)
async def test_invalid_writes_change_nothing(jwt_env: ApiEnv, body: Any, status: int, error: str) -> None:
    token = await jwt_env.token("courses:write")
    response = await jwt_env.api.post("/api/v1/courses", json=body, headers=jwt_env.bearer(token))
    assert response.status_code == status and response.json()["error"] == error
    assert await jwt_env.pool.fetchval("SELECT count(*) FROM api_items") == 0


async def test_malformed_json_is_invalid_request(jwt_env: ApiEnv) -> None:
    token = await jwt_env.token("courses:write")
    response = await jwt_env.api.post(
        "/api/v1/courses", content=b"{nope", headers={**jwt_env.bearer(token), "content-type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


async def test_duplicate_unique_field_is_a_conflict(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("courses:write")
    first = await env.api.post("/api/v1/courses", json=sample(BY_NAME["courses"]), headers=env.bearer(token))
    again = await env.api.post("/api/v1/courses", json=sample(BY_NAME["courses"]), headers=env.bearer(token))
    assert first.status_code == 201 and again.status_code == 409 and again.json()["error"] == "conflict"
    other = await env.api.post("/api/v1/courses", json=sample(BY_NAME["courses"], 1), headers=env.bearer(token))
    clash = await env.api.patch(
        f"/api/v1/courses/{other.json()['id']}", json={"slug": "course-0"}, headers=env.bearer(token)
    )
    assert clash.status_code == 409
    assert (
        await env.api.get(f"/api/v1/courses/{other.json()['id']}", headers=env.bearer(await env.token("courses:read")))
    ).json()["slug"] == "course-1"


async def test_patch_validates_the_merged_document_and_changes_nothing_on_error(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("events:write events:read")
    created = (await env.api.post("/api/v1/events", json=sample(BY_NAME["events"]), headers=env.bearer(token))).json()
    bad_type = await env.api.patch(
        f"/api/v1/events/{created['id']}", json={"capacity": "ten"}, headers=env.bearer(token)
    )
    bad_rule = await env.api.patch(
        f"/api/v1/events/{created['id']}", json={"ends_at": "2026-04-01T00:00:00Z"}, headers=env.bearer(token)
    )
    assert bad_type.status_code == 422 and bad_rule.status_code == 422
    assert "ends_at" in bad_rule.json()["error_description"]
    ok = await env.api.patch(f"/api/v1/events/{created['id']}", json={"capacity": 30}, headers=env.bearer(token))
    assert ok.status_code == 200 and ok.json()["capacity"] == 30 and ok.json()["title"] == created["title"]
    assert ok.json()["updated_at"] > created["updated_at"]


async def test_unknown_item_id_is_404(jwt_env: ApiEnv) -> None:
    token = await jwt_env.token("courses:read")
    for item_id in (ID, "not-a-uuid"):
        response = await jwt_env.api.get(f"/api/v1/courses/{item_id}", headers=jwt_env.bearer(token))
        assert response.status_code == 404 and response.json()["error"] == "not_found"


# -- singletons, analytics, storage --------------------------------------------------------


async def test_school_settings_start_from_the_school_then_are_set_and_read(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("school:read school:write")
    first = await env.api.get("/api/v1/school", headers=env.bearer(token))
    assert first.status_code == 200 and first.json()["name"] == "Acme School"  # the authorization server's record
    refused = await env.api.patch("/api/v1/school", json={"name": ""}, headers=env.bearer(token))
    assert refused.status_code == 422
    zone = await env.api.patch("/api/v1/school", json={"timezone": "Europe/Vienna"}, headers=env.bearer(token))
    assert zone.status_code == 200 and zone.json()["name"] == "Acme School"
    done = await env.api.patch("/api/v1/school", json={"name": "Acme Academy"}, headers=env.bearer(token))
    assert done.status_code == 200 and done.json()["name"] == "Acme Academy"
    read = (await env.api.get("/api/v1/school", headers=env.bearer(token))).json()
    assert read["name"] == "Acme Academy" and read["currency"] == "EUR" and read["timezone"] == "Europe/Vienna"


async def test_account_belongs_to_the_calling_user(jwt_env: ApiEnv) -> None:
    env = jwt_env
    ann = await env.token("account:read account:write", role="student")
    bob = await env.token("account:read account:write", role="student")
    await env.api.patch("/api/v1/account", json={"display_name": "Ann"}, headers=env.bearer(ann))
    assert (await env.api.get("/api/v1/account", headers=env.bearer(ann))).json()["display_name"] == "Ann"
    assert (await env.api.get("/api/v1/account", headers=env.bearer(bob))).json()["display_name"] == ""


async def test_appearance_has_defaults_and_refuses_bad_colours(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("appearance:read appearance:write")
    assert (await env.api.get("/api/v1/appearance", headers=env.bearer(token))).json()["theme"] == "auto"
    bad = await env.api.patch("/api/v1/appearance", json={"primary_color": "red"}, headers=env.bearer(token))
    assert bad.status_code == 422
    good = await env.api.patch("/api/v1/appearance", json={"primary_color": "#112233"}, headers=env.bearer(token))
    assert good.json()["primary_color"] == "#112233"


async def test_analytics_are_computed_from_the_schools_data(jwt_env: ApiEnv) -> None:
    env = jwt_env
    course = await insert(env, BY_NAME["courses"], "acme")
    await insert(
        env,
        BY_NAME["students"],
        "acme",
        1,
        enrollments=[{"course_id": course["id"], "enrolled_at": "2026-05-02T00:00:00Z"}],
    )
    await insert(
        env,
        BY_NAME["students"],
        "acme",
        2,
        enrollments=[{"course_id": course["id"], "enrolled_at": "2026-05-03T00:00:00Z"}],
    )
    line = [{"product_type": "course", "product_id": course["id"], "title": "Course", "unit_price": 4900}]
    paid = {"subtotal": 4900, "total": 4900, "items": line, "placed_at": "2026-05-02T00:00:00Z"}
    await insert(env, BY_NAME["orders"], "acme", 1, status="paid", **paid)
    await insert(env, BY_NAME["orders"], "acme", 2, status="refunded", **paid)
    await insert(env, BY_NAME["orders"], "other-school", 3, status="paid", placed_at="2026-05-02T00:00:00Z")
    token = await env.token("analytics:read")
    figures = (await env.api.get("/api/v1/analytics?from=2026-05-01&to=2026-06-01", headers=env.bearer(token))).json()
    assert figures["totals"]["students"] == 2
    assert figures["revenue"] == [{"currency": "EUR", "amount": 4900, "orders": 1}]
    assert figures["enrolments_per_course"] == [{"course_id": course["id"], "enrolments": 2}]
    bad = await env.api.get("/api/v1/analytics?from=2026-06-01&to=2026-05-01", headers=env.bearer(token))
    assert bad.status_code == 400


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


async def test_upload_returns_a_stable_url(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("storage:write")
    response = await env.api.post(
        "/api/v1/storage/files", files={"file": ("../../logo.png", PNG, "image/png")}, headers=env.bearer(token)
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["url"] == f"{BASE_URL}/api/v1/storage/files/{body['id']}"
    assert body["filename"] == "logo.png" and body["size"] == len(PNG)
    fetched = await env.api.get(body["url"].removeprefix(BASE_URL))
    assert fetched.status_code == 200 and fetched.content == PNG
    assert fetched.headers["content-type"] == "image/png"
    assert fetched.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("name", "content", "kind", "status"),
    [
        ("a.png", b"GIF89a not a png", "image/png", 415),
        ("a.exe", b"MZ\x90\x00", "application/x-msdownload", 415),
        ("a.txt", b"\xff\xfe\x00bad", "text/plain", 415),
        ("a.txt", b"", "text/plain", 400),
        ("big.txt", b"a" * (5 * 1024 * 1024 + 1), "text/plain", 413),
    ],
)
async def test_refused_uploads_store_nothing(
    jwt_env: ApiEnv, name: str, content: bytes, kind: str, status: int
) -> None:
    token = await jwt_env.token("storage:write")
    response = await jwt_env.api.post(
        "/api/v1/storage/files", files={"file": (name, content, kind)}, headers=jwt_env.bearer(token)
    )
    assert response.status_code == status, response.text
    assert await jwt_env.pool.fetchval("SELECT count(*) FROM api_files") == 0


async def test_a_refused_content_type_is_quoted_fit_for_a_description(jwt_env: ApiEnv) -> None:
    """The refusal quotes the part's content type, which the caller wrote: a quote mark or
    a non-ASCII letter in it is shown as "?" (RFC 6749 §5.2), never a 500."""
    token = await jwt_env.token("storage:write")
    for kind in ('text/"quoted"', "t\u00e9xt/plain"):
        response = await jwt_env.api.post(
            "/api/v1/storage/files", files={"file": ("a.bin", b"x", kind)}, headers=jwt_env.bearer(token)
        )
        assert response.status_code == 415, response.text
        assert "?" in response.json()["error_description"] and '"' not in response.json()["error_description"]
    assert await jwt_env.pool.fetchval("SELECT count(*) FROM api_files") == 0


async def test_upload_needs_storage_write(jwt_env: ApiEnv) -> None:
    token = await jwt_env.token("courses:read")
    response = await jwt_env.api.post(
        "/api/v1/storage/files", files={"file": ("a.txt", b"hi", "text/plain")}, headers=jwt_env.bearer(token)
    )
    assert response.status_code == 403 and response.json()["scope"] == "storage:write"
