"""The demo seed: every area filled with valid, connected content, exactly once."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from typing import Any

import asyncpg
import pytest

from courseschool.platform.demo import seed_demo
from courseschool.platform.demo.activity import PRODUCT_AREAS
from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME
from courseschool.resource_api.areas.rules import validate_document as validated
from courseschool.resource_api.storage import analytics

COLLECTIONS = [a.name for a in AREA_SPECS if a.kind == "collection"]
OWNER = "owner-user-1"


@pytest.fixture
def school_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@pytest.fixture
async def seeded(clean_db: asyncpg.Pool, school_id: str, now: dt.datetime) -> asyncpg.Pool:
    assert await seed_demo(clean_db, school_id=school_id, slug="demo", owner_id=OWNER, now=now) is True
    return clean_db


async def _items(pool: asyncpg.Pool, school_id: str) -> dict[str, list[dict[str, Any]]]:
    rows = await pool.fetch(
        "SELECT area, id::text AS id, data FROM api_items WHERE school_id = $1 ORDER BY created_at, id",
        uuid.UUID(school_id),
    )
    items: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        items[r["area"]].append({"id": r["id"], **r["data"]})
    return items


async def _singletons(pool: asyncpg.Pool, school_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    rows = await pool.fetch("SELECT area, owner, data FROM api_singletons WHERE school_id = $1", uuid.UUID(school_id))
    return {(r["area"], r["owner"]): r["data"] for r in rows}


async def _snapshot(pool: asyncpg.Pool) -> list[list[asyncpg.Record]]:
    return [
        await pool.fetch("SELECT * FROM api_schools ORDER BY id"),
        await pool.fetch("SELECT * FROM api_items ORDER BY id"),
        await pool.fetch("SELECT * FROM api_singletons ORDER BY school_id, area, owner"),
    ]


async def test_every_collection_has_items_and_every_singleton_is_set(seeded: asyncpg.Pool, school_id: str) -> None:
    items = await _items(seeded, school_id)
    assert {area: len(items[area]) for area in COLLECTIONS if len(items[area]) < 2} == {}
    assert set(items) == set(COLLECTIONS)
    singletons = await _singletons(seeded, school_id)
    assert set(singletons) == {("school", ""), ("appearance", ""), ("account", OWNER)}
    assert singletons[("school", "")]["name"] == "Demo Course School"
    assert await seeded.fetchval("SELECT slug FROM api_schools WHERE id = $1", uuid.UUID(school_id)) == "demo"


async def test_every_document_validates_against_its_model(seeded: asyncpg.Pool, school_id: str) -> None:
    items = await _items(seeded, school_id)
    for area, docs in items.items():
        spec = BY_NAME[area]
        for doc in docs:
            data = {k: v for k, v in doc.items() if k != "id"}
            assert validated(spec, data) == data, (area, doc["id"])
    for (area, _), data in (await _singletons(seeded, school_id)).items():
        assert validated(BY_NAME[area], data) == data, area


async def test_references_point_at_real_items(seeded: asyncpg.Pool, school_id: str) -> None:
    items = await _items(seeded, school_id)
    ids = {area: {d["id"]: d for d in docs} for area, docs in items.items()}

    course_ids = set(ids["courses"])
    assert all(set(c["lecturer_ids"]) <= set(ids["lecturers"]) and c["lecturer_ids"] for c in items["courses"])
    assert sorted(c["course_id"] for c in items["curriculum"]) == sorted(course_ids)  # one per course
    assert all(s["sections"] and all(sec["lessons"] for sec in s["sections"]) for s in items["curriculum"])
    enrolled = [e["course_id"] for s in items["students"] for e in s["enrollments"]]
    assert enrolled and set(enrolled) <= {i for i, c in ids["courses"].items() if c["published"]}
    assert all(m["plan_id"] in ids["membership_plans"] for m in items["members"] if m["plan_id"])
    for sub in items["subscriptions"]:
        member = ids["members"][sub["member_id"]]
        assert sub["plan_id"] in ids["membership_plans"] and sub["plan_id"] == member["plan_id"]
    assert all(p["author_id"] in ids["lecturers"] for p in items["posts"])
    for comment in items["comments"]:
        assert comment["target_id"] in ids[{"course": "courses", "post": "posts"}[comment["target_type"]]]

    coupons = {c["code"]: c for c in items["coupons"]}
    used = [o["coupon_code"] for o in items["orders"] if o["coupon_code"]]
    assert len(used) >= 2 and set(used) <= set(coupons)
    for order in items["orders"]:
        for item in order["items"]:
            product = ids[PRODUCT_AREAS[item["product_type"]]][item["product_id"]]
            assert item["unit_price"] == product.get("price", 0)
        assert order["subtotal"] == sum(i["quantity"] * i["unit_price"] for i in order["items"])
        assert order["total"] == order["subtotal"] - order["discount"] >= 0
        assert (order["discount"] > 0) == (order["coupon_code"] is not None)
    assert {o["status"] for o in items["orders"]} >= {"paid", "refunded", "pending"}


async def test_dates_spread_over_the_last_90_days(seeded: asyncpg.Pool, school_id: str, now: dt.datetime) -> None:
    items = await _items(seeded, school_id)
    start = now - dt.timedelta(days=90)
    placed = [dt.datetime.fromisoformat(o["placed_at"]) for o in items["orders"]]
    enrolled = [dt.datetime.fromisoformat(e["enrolled_at"]) for s in items["students"] for e in s["enrollments"]]
    for when in (placed, enrolled):
        assert all(start <= t < now for t in when)
        assert max(when) - min(when) > dt.timedelta(days=60)
    events = [dt.datetime.fromisoformat(e["starts_at"]) for e in items["events"]]
    assert any(t < now for t in events) and any(t > now for t in events)


async def test_second_call_changes_nothing(seeded: asyncpg.Pool, school_id: str) -> None:
    before = await _snapshot(seeded)
    assert await seed_demo(seeded, school_id=school_id, slug="demo", owner_id="someone-else") is False
    assert await _snapshot(seeded) == before


async def test_a_school_with_items_is_left_alone(clean_db: asyncpg.Pool, school_id: str) -> None:
    from courseschool.resource_api.storage.items import PgItemStore
    from courseschool.resource_api.storage.schools import PgSchoolStore, SchoolRecord

    store = PgItemStore(clean_db)
    await PgSchoolStore(clean_db).save(SchoolRecord(id=school_id, slug="own"))
    spec = BY_NAME["pages"]
    await store.create(spec, school_id, validated(spec, {"title": "Home", "slug": "home"}))
    assert await seed_demo(clean_db, school_id=school_id, slug="own", owner_id=OWNER) is False
    assert await clean_db.fetchval("SELECT count(*) FROM api_items") == 1
    assert await clean_db.fetchval("SELECT count(*) FROM api_singletons") == 0


async def test_without_an_owner_no_account_and_own_settings_are_kept(clean_db: asyncpg.Pool, school_id: str) -> None:
    from courseschool.resource_api.storage.items import PgItemStore
    from courseschool.resource_api.storage.schools import PgSchoolStore, SchoolRecord

    store = PgItemStore(clean_db)
    await PgSchoolStore(clean_db).save(SchoolRecord(id=school_id, slug="mine"))
    spec = BY_NAME["school"]
    await store.put_singleton(spec, school_id, "", validated(spec, {"name": "My Own School"}))
    assert await seed_demo(clean_db, school_id=school_id, slug="mine") is True
    singletons = await _singletons(clean_db, school_id)
    assert set(singletons) == {("school", ""), ("appearance", "")}
    assert singletons[("school", "")]["name"] == "My Own School"


async def test_schools_are_seeded_separately(seeded: asyncpg.Pool, school_id: str) -> None:
    other = str(uuid.uuid4())
    assert await seed_demo(seeded, school_id=other, slug="other") is True
    mine, theirs = await _items(seeded, school_id), await _items(seeded, other)
    assert {a: len(d) for a, d in mine.items()} == {a: len(d) for a, d in theirs.items()}
    assert not {d["id"] for ds in mine.values() for d in ds} & {d["id"] for ds in theirs.values() for d in ds}


async def test_analytics_show_the_last_90_days(seeded: asyncpg.Pool, school_id: str, now: dt.datetime) -> None:
    items = await _items(seeded, school_id)
    figures = await analytics.school_figures(seeded, school_id, now - dt.timedelta(days=90), now)
    assert figures["totals"]["students"] == len(items["students"]) > 0
    assert figures["totals"]["courses"] == len(items["courses"])
    paid = [o for o in items["orders"] if o["status"] == "paid"]
    assert figures["orders_paid"] == len(paid)
    assert figures["revenue"] == [{"currency": "EUR", "amount": sum(o["total"] for o in paid), "orders": len(paid)}]
    assert figures["revenue"][0]["amount"] > 0
    enrolments = sum(r["enrolments"] for r in figures["enrolments_per_course"])
    assert enrolments == sum(len(s["enrollments"]) for s in items["students"]) > 0
