"""The fields of every resource area, validated with msgspec.

These are the writable (or, for read-only areas, stored) fields; `id`, `school_id`,
`created_at` and `updated_at` are added by the generic mechanism. Amounts are integers
in minor units (cents) with an ISO 4217 currency, as payment systems keep them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

Title = Annotated[str, Meta(min_length=1, max_length=200)]
Slug = Annotated[str, Meta(min_length=1, max_length=120, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")]
Text = Annotated[str, Meta(max_length=20000)]
ShortText = Annotated[str, Meta(max_length=500)]
Email = Annotated[str, Meta(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]
Url = Annotated[str, Meta(max_length=2000, pattern=r"^https?://[^\s]+$")]
Money = Annotated[int, Meta(ge=0, le=100_000_000)]
Currency = Annotated[str, Meta(pattern=r"^[A-Z]{3}$")]
Id = Annotated[str, Meta(pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")]
Color = Annotated[str, Meta(pattern=r"^#[0-9a-fA-F]{6}$")]

_STRICT = {"forbid_unknown_fields": True, "kw_only": True}


class Course(Struct, **_STRICT):
    title: Title
    slug: Slug
    description: Text = ""
    price: Money = 0
    currency: Currency = "EUR"
    level: Literal["beginner", "intermediate", "advanced"] = "beginner"
    lecturer_ids: Annotated[list[Id], Meta(max_length=20)] = []
    published: bool = False


class Enrollment(Struct, **_STRICT):
    course_id: Id
    enrolled_at: dt.datetime
    progress_percent: Annotated[int, Meta(ge=0, le=100)] = 0


class Student(Struct, **_STRICT):
    name: Title
    email: Email
    enrollments: Annotated[list[Enrollment], Meta(max_length=500)] = []


class Member(Struct, **_STRICT):
    name: Title
    email: Email
    plan_id: Id | None = None
    status: Literal["active", "paused", "cancelled"] = "active"
    joined_at: dt.datetime | None = None


class Lesson(Struct, **_STRICT):
    title: Title
    kind: Literal["video", "text", "quiz", "assignment"] = "text"
    duration_minutes: Annotated[int, Meta(ge=0, le=1440)] = 0
    free_preview: bool = False


class Section(Struct, **_STRICT):
    title: Title
    lessons: Annotated[list[Lesson], Meta(max_length=200)] = []


class Curriculum(Struct, **_STRICT):
    """The ordered sections and lessons of one course (one curriculum per course)."""

    course_id: Id
    sections: Annotated[list[Section], Meta(max_length=100)] = []


class OrderItem(Struct, **_STRICT):
    product_type: Literal["course", "digital_product", "membership_plan", "event"]
    product_id: Id
    title: Title
    quantity: Annotated[int, Meta(ge=1, le=1000)] = 1
    unit_price: Money = 0


class Order(Struct, **_STRICT):
    number: Annotated[str, Meta(min_length=1, max_length=40)]
    customer_email: Email
    items: Annotated[list[OrderItem], Meta(min_length=1, max_length=100)]
    subtotal: Money
    discount: Money = 0
    total: Money = 0
    currency: Currency = "EUR"
    coupon_code: str | None = None
    status: Literal["pending", "paid", "refunded", "cancelled"] = "pending"
    placed_at: dt.datetime | None = None


class Event(Struct, **_STRICT):
    title: Title
    slug: Slug
    starts_at: dt.datetime
    ends_at: dt.datetime | None = None
    description: Text = ""
    location: ShortText = ""
    online_url: Url | None = None
    capacity: Annotated[int, Meta(ge=0, le=1_000_000)] | None = None
    published: bool = False


class MembershipPlan(Struct, **_STRICT):
    name: Title
    slug: Slug
    description: Text = ""
    price: Money = 0
    currency: Currency = "EUR"
    interval: Literal["month", "year"] = "month"
    published: bool = False


class Coupon(Struct, **_STRICT):
    code: Annotated[str, Meta(min_length=3, max_length=40, pattern=r"^[A-Z0-9_-]+$")]
    discount_type: Literal["percent", "fixed"] = "percent"
    amount: Annotated[int, Meta(ge=1, le=100_000_000)] = 10
    currency: Currency | None = None
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    max_redemptions: Annotated[int, Meta(ge=1)] | None = None
    active: bool = True


class Post(Struct, **_STRICT):
    title: Title
    slug: Slug
    body: Text = ""
    excerpt: ShortText = ""
    author_id: Id | None = None
    published: bool = False
    published_at: dt.datetime | None = None


class Subscription(Struct, **_STRICT):
    member_id: Id
    plan_id: Id
    status: Literal["trialing", "active", "past_due", "cancelled"] = "active"
    started_at: dt.datetime | None = None
    renews_at: dt.datetime | None = None
    cancelled_at: dt.datetime | None = None


class DigitalProduct(Struct, **_STRICT):
    title: Title
    slug: Slug
    description: Text = ""
    price: Money = 0
    currency: Currency = "EUR"
    file_url: Url | None = None
    published: bool = False


class Comment(Struct, **_STRICT):
    target_type: Literal["course", "post"]
    target_id: Id
    author_name: Title
    body: Annotated[str, Meta(min_length=1, max_length=5000)]
    approved: bool = False


class Lecturer(Struct, **_STRICT):
    name: Title
    slug: Slug
    bio: Text = ""
    email: Email | None = None
    photo_url: Url | None = None
    published: bool = False


class FormField(Struct, **_STRICT):
    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    label: Title
    type: Literal["text", "email", "textarea", "number", "checkbox", "select"] = "text"
    required: bool = False


class Form(Struct, **_STRICT):
    title: Title
    fields: Annotated[list[FormField], Meta(max_length=50)] = []
    submission_count: Annotated[int, Meta(ge=0)] = 0


class Page(Struct, **_STRICT):
    title: Title
    slug: Slug
    body: Text = ""
    published: bool = False


class School(Struct, **_STRICT):
    name: Title
    description: Text = ""
    contact_email: Email | None = None
    timezone: Annotated[str, Meta(max_length=64)] = "UTC"
    locale: Annotated[str, Meta(pattern=r"^[a-z]{2}(-[A-Z]{2})?$")] = "en"
    currency: Currency = "EUR"


class Appearance(Struct, **_STRICT):
    theme: Literal["light", "dark", "auto"] = "auto"
    primary_color: Color = "#2f5bd3"
    logo_url: Url | None = None
    font: Literal["system", "serif", "sans", "mono"] = "system"


class Account(Struct, **_STRICT):
    """The calling user's own account settings at the school."""

    display_name: Annotated[str, Meta(max_length=200)] = ""
    bio: Text = ""
    locale: Annotated[str, Meta(pattern=r"^[a-z]{2}(-[A-Z]{2})?$")] = "en"
    email_notifications: bool = True


def schema_of(model: type[Struct]) -> dict:
    return msgspec.json.schema(model)
