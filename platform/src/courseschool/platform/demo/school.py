"""Fills a new school with the demo content (`catalogue.py`, `activity.py`, `site.py`), so that a newcomer sees
something real in every area. The ids come from the store and the dates are placed
relative to `now`. Every document goes through the area's model and rules exactly as
a write through the API does, so the demo can never hold what the API would refuse.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import asyncpg

from courseschool.resource_api.areas.registry import BY_NAME
from courseschool.resource_api.areas.rules import validate_document
from courseschool.resource_api.storage.items import PgItemStore
from courseschool.resource_api.storage.schools import PgSchoolStore, SchoolRecord

from .activity import (
    CANCELLED_OFFSET,
    COMMENTS,
    COUPONS,
    MEMBERS,
    ORDER_NUMBER_FIRST,
    ORDERS,
    PLAN_DAYS,
    PRODUCT_AREAS,
    STUDENTS,
)
from .catalogue import COURSES, CURRICULA, DIGITAL_PRODUCTS, EVENTS, LECTURERS, MEMBERSHIP_PLANS
from .site import ACCOUNT, APPEARANCE, FORMS, PAGES, POSTS, SCHOOL

_HAS_ITEMS = "SELECT EXISTS (SELECT 1 FROM api_items WHERE school_id = $1)"


class _Seeder:
    """Creates validated documents and remembers them by area and key."""

    def __init__(self, store: PgItemStore, school_id: str, now: dt.datetime) -> None:
        self.store, self.school_id, self.now = store, school_id, now
        self.made: dict[str, dict[str, dict[str, Any]]] = {}

    async def add(self, area: str, key: str, data: dict[str, Any]) -> dict[str, Any]:
        spec = BY_NAME[area]
        item = await self.store.create(spec, self.school_id, validate_document(spec, data))
        self.made.setdefault(area, {})[key] = item
        return item

    def id(self, area: str, key: str) -> str:
        return self.made[area][key]["id"]

    def at(self, days: float | None) -> dt.datetime | None:
        return None if days is None else self.now + dt.timedelta(days=days)

    def order_item(self, product_type: str, key: str) -> dict[str, Any]:
        product = self.made[PRODUCT_AREAS[product_type]][key]
        return {
            "product_type": product_type,
            "product_id": product["id"],
            "title": product.get("title") or product["name"],
            "quantity": 1,
            "unit_price": product.get("price", 0),
        }

    def discount(self, code: str | None, subtotal: int) -> int:
        if code is None:
            return 0
        coupon = self.made["coupons"][code]
        if coupon["discount_type"] == "percent":
            return subtotal * min(coupon["amount"], 100) // 100
        return min(coupon["amount"], subtotal)


async def seed_demo(
    pool: asyncpg.Pool,
    *,
    school_id: str,
    slug: str,
    owner_id: str | None = None,
    now: dt.datetime | None = None,
    name: str | None = None,
) -> bool:
    """Fill the school with the demo content; False (and nothing changed beyond
    recording the school) when it already holds items."""
    now = now or dt.datetime.now(dt.UTC)
    if now.tzinfo is None:
        raise ValueError("now must carry a time zone")
    async with pool.acquire() as conn, conn.transaction():
        # One seeding per school at a time, all or nothing.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"seed:{school_id}")
        store = PgItemStore(conn)
        await PgSchoolStore(conn).save(SchoolRecord(id=school_id, slug=slug, name=name))
        if await conn.fetchval(_HAS_ITEMS, uuid.UUID(school_id)):
            return False
        await _fill(_Seeder(store, school_id, now), store, school_id, owner_id)
    return True


async def _fill(s: _Seeder, store: PgItemStore, school_id: str, owner_id: str | None) -> None:
    """Every area, in the order their references need (lecturers before courses, courses
    and posts before comments, coupons and products before orders)."""
    await _teaching(s)
    await _membership(s)
    await _shop_and_news(s)
    await _orders_and_site(s)
    await _singletons(store, school_id, owner_id)


async def _teaching(s: _Seeder) -> None:
    for lecturer in LECTURERS:
        await s.add("lecturers", lecturer["slug"], lecturer)
    for course in COURSES:
        await s.add(
            "courses",
            course["slug"],
            {**course, "lecturer_ids": [s.id("lecturers", k) for k in course["lecturer_ids"]]},
        )
    for course_slug, sections in CURRICULA.items():
        await s.add(
            "curriculum",
            course_slug,
            {
                "course_id": s.id("courses", course_slug),
                "sections": [
                    {
                        "title": title,
                        "lessons": [
                            dict(
                                zip(("title", "kind", "duration_minutes", "free_preview"), lesson, strict=False)
                            )  # trailing fields optional
                            for lesson in lessons
                        ],
                    }
                    for title, lessons in sections
                ],
            },
        )


async def _membership(s: _Seeder) -> None:
    for plan in MEMBERSHIP_PLANS:
        await s.add("membership_plans", plan["slug"], plan)
    for name, email, plan_slug, status, joined, _ in MEMBERS:
        await s.add(
            "members",
            email,
            {
                "name": name,
                "email": email,
                "status": status,
                "joined_at": s.at(joined),
                "plan_id": s.id("membership_plans", plan_slug) if plan_slug else None,
            },
        )
    for _, email, plan_slug, _, joined, status in MEMBERS:
        if status is None:
            continue
        plan = s.made["membership_plans"][plan_slug]
        period = PLAN_DAYS[plan["interval"]]
        cycles = -joined // period + 1  # the first renewal still ahead of now
        await s.add(
            "subscriptions",
            email,
            {
                "member_id": s.id("members", email),
                "plan_id": plan["id"],
                "status": status,
                "started_at": s.at(joined),
                "renews_at": None if status == "cancelled" else s.at(joined + cycles * period),
                "cancelled_at": s.at(CANCELLED_OFFSET) if status == "cancelled" else None,
            },
        )
    for name, email, enrollments in STUDENTS:
        await s.add(
            "students",
            email,
            {
                "name": name,
                "email": email,
                "enrollments": [
                    {"course_id": s.id("courses", course), "enrolled_at": s.at(days), "progress_percent": progress}
                    for course, days, progress in enrollments
                ],
            },
        )


async def _shop_and_news(s: _Seeder) -> None:
    for coupon in COUPONS:
        await s.add(
            "coupons",
            coupon["code"],
            {**coupon, "valid_from": s.at(coupon.get("valid_from")), "valid_until": s.at(coupon.get("valid_until"))},
        )
    for product in DIGITAL_PRODUCTS:
        await s.add("digital_products", product["slug"], product)
    for event in EVENTS:
        fields = {k: v for k, v in event.items() if k != "minutes"}
        starts = s.now + dt.timedelta(days=event["starts_at"])
        await s.add(
            "events",
            event["slug"],
            {**fields, "starts_at": starts, "ends_at": starts + dt.timedelta(minutes=event["minutes"])},
        )
    for post in POSTS:
        await s.add(
            "posts",
            post["slug"],
            {
                **post,
                "author_id": s.id("lecturers", post["author_id"]),
                "published_at": s.at(post["published_at"]),
                "published": post["published_at"] is not None,
            },
        )


async def _orders_and_site(s: _Seeder) -> None:
    for number, (email, products, placed, status, code) in enumerate(ORDERS, start=ORDER_NUMBER_FIRST):
        items = [s.order_item(kind, key) for kind, key in products]
        subtotal = sum(i["quantity"] * i["unit_price"] for i in items)
        discount = s.discount(code, subtotal)
        await s.add(
            "orders",
            str(number),
            {
                "number": f"DEMO-{number}",
                "customer_email": email,
                "items": items,
                "subtotal": subtotal,
                "discount": discount,
                "total": subtotal - discount,
                "currency": "EUR",
                "coupon_code": code,
                "status": status,
                "placed_at": s.at(placed),
            },
        )
    for i, (target_type, target, author, body, approved) in enumerate(COMMENTS):
        target_area = "courses" if target_type == "course" else "posts"
        await s.add(
            "comments",
            str(i),
            {
                "target_type": target_type,
                "target_id": s.id(target_area, target),
                "author_name": author,
                "body": body,
                "approved": approved,
            },
        )
    for form in FORMS:
        await s.add("forms", form["title"], form)
    for page in PAGES:
        await s.add("pages", page["slug"], page)


async def _singletons(store: PgItemStore, school_id: str, owner_id: str | None) -> None:
    singletons = [("school", "", SCHOOL), ("appearance", "", APPEARANCE)]
    if owner_id is not None:
        singletons.append(("account", owner_id, ACCOUNT))
    for area, owner, data in singletons:
        spec = BY_NAME[area]
        if await store.get_singleton(spec, school_id, owner) is None:  # settings made by hand stay
            await store.put_singleton(spec, school_id, owner, validate_document(spec, data))
