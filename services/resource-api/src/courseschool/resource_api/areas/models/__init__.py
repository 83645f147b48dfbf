"""The fields of every resource area, validated with msgspec.

These are the writable (or, for read-only areas, stored) fields; `id`, `school_id`,
`created_at` and `updated_at` are added by the generic mechanism. Amounts are integers
in minor units (cents) with an ISO 4217 currency, as payment systems keep them.

Every field carries a description and an example (`Meta`); the OpenAPI document at
`/openapi.json` is made from them, so they say what a client needs to know: units,
formats, defaults. The annotations change no validation.
"""

from __future__ import annotations

import msgspec
from msgspec import Struct

from .base import COURSE_ID, LECTURER_ID, MEMBER_ID, PLAN_ID, POST_ID, PRODUCT_ID, Money, doc
from .commerce import Coupon, DigitalProduct, MembershipPlan, Order, OrderItem, Subscription
from .content import Comment, Event, Form, FormField, Page, Post
from .settings import Account, Appearance, School
from .teaching import Course, Curriculum, Enrollment, Lecturer, Lesson, Member, Section, Student


def schema_of(model: type[Struct]) -> dict:
    return msgspec.json.schema(model)


__all__ = [
    "Course",
    "Enrollment",
    "Student",
    "Member",
    "Lesson",
    "Section",
    "Curriculum",
    "Lecturer",
    "OrderItem",
    "Order",
    "MembershipPlan",
    "Coupon",
    "Subscription",
    "DigitalProduct",
    "Event",
    "Post",
    "Comment",
    "FormField",
    "Form",
    "Page",
    "School",
    "Appearance",
    "Account",
    "COURSE_ID",
    "LECTURER_ID",
    "MEMBER_ID",
    "PLAN_ID",
    "POST_ID",
    "PRODUCT_ID",
    "Money",
    "doc",
    "schema_of",
]
