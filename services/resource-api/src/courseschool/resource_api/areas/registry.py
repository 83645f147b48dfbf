"""Every resource area as a declaration: its name, path, model and rules.

The generic mechanism (`storage/items.py`, `service.py`, `web/routes.py`, `openapi/`) reads
these and nothing else; adding an area is one `AreaSpec` here over its `Area` of the
shared scope registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec
from msgspec import Struct

from courseschool.common import scopes
from courseschool.common.scopes import Area

from ..storage.schools import SchoolRecord
from . import models as m
from .rules import coupon_makes_sense, dates_in_order, order_adds_up

Kind = Literal["collection", "singleton", "computed", "upload"]


class AreaSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One resource area: its scopes (the shared registry's `Area`), its path under
    /api/v1, how it is served, its model and its rules."""

    area: Area
    path: str  # under /api/v1, e.g. "membership-plans"
    kind: Kind
    model: type[Struct] | None = None
    public: bool = False  # anonymous callers may read its published items
    # Fields anonymous callers do not see (the public catalogue): contact details, links
    # meant for buyers or attendees. Callers with the area's read scope see every field.
    private_fields: tuple[str, ...] = ()
    unique: str | None = None  # a field unique per school (slug, code, email)
    # The field that names an item (title, name, number, code): what the activity of an
    # app shows of the items it changed (activity.py); None: the area has no such field.
    label: str | None = None
    per_user: bool = False  # a singleton kept per user (account)
    check: Callable[[dict[str, Any]], None] | None = None
    # A singleton's first value, from the school it belongs to (when nothing is stored yet).
    from_school: Callable[[SchoolRecord], dict[str, Any]] | None = None
    description: str = ""

    @property
    def name(self) -> str:
        """The scope prefix, e.g. "membership_plans"."""
        return self.area.name

    @property
    def readable(self) -> bool:
        return "read" in self.area.accesses

    @property
    def writable(self) -> bool:
        return "write" in self.area.accesses

    @property
    def read_scope(self) -> str:
        return f"{self.name}:read"

    @property
    def write_scope(self) -> str:
        return f"{self.name}:write"

    @property
    def has_published(self) -> bool:
        return self.model is not None and "published" in self.model.__struct_fields__


AREA_SPECS: tuple[AreaSpec, ...] = (
    AreaSpec(
        area=scopes.COURSES,
        path="courses",
        kind="collection",
        model=m.Course,
        label="title",
        public=True,
        unique="slug",
        description="Courses of the school, with price and lecturers.",
    ),
    AreaSpec(
        area=scopes.STUDENTS,
        path="students",
        kind="collection",
        model=m.Student,
        label="name",
        unique="email",
        description="Students and their enrolments.",
    ),
    AreaSpec(
        area=scopes.MEMBERS,
        path="members",
        kind="collection",
        model=m.Member,
        label="name",
        unique="email",
        description="Community members and their membership plan.",
    ),
    AreaSpec(
        area=scopes.CURRICULUM,
        path="curriculum",
        kind="collection",
        model=m.Curriculum,
        unique="course_id",
        description="The ordered sections and lessons of each course.",
    ),
    AreaSpec(
        area=scopes.ORDERS,
        path="orders",
        kind="collection",
        model=m.Order,
        label="number",
        unique="number",
        check=order_adds_up,
        description="Orders placed at the school (read-only).",
    ),
    AreaSpec(
        area=scopes.EVENTS,
        path="events",
        kind="collection",
        model=m.Event,
        label="title",
        public=True,
        unique="slug",
        check=dates_in_order("starts_at", "ends_at"),
        private_fields=("online_url",),  # the meeting link is for those who signed up
        description="Live and online events.",
    ),
    AreaSpec(
        area=scopes.MEMBERSHIP_PLANS,
        path="membership-plans",
        kind="collection",
        model=m.MembershipPlan,
        label="name",
        public=True,
        unique="slug",
        description="Membership plans on sale.",
    ),
    AreaSpec(
        area=scopes.COUPONS,
        path="coupons",
        kind="collection",
        model=m.Coupon,
        label="code",
        unique="code",
        check=coupon_makes_sense,
        description="Discount coupons.",
    ),
    AreaSpec(
        area=scopes.POSTS,
        path="posts",
        kind="collection",
        model=m.Post,
        label="title",
        public=True,
        unique="slug",
        description="Blog posts.",
    ),
    AreaSpec(
        area=scopes.SUBSCRIPTIONS,
        path="subscriptions",
        kind="collection",
        model=m.Subscription,
        description="Recurring subscriptions of members to plans.",
    ),
    AreaSpec(
        area=scopes.DIGITAL_PRODUCTS,
        path="digital-products",
        kind="collection",
        model=m.DigitalProduct,
        label="title",
        public=True,
        unique="slug",
        private_fields=("file_url",),  # the download is what is sold
        description="Downloadable products.",
    ),
    AreaSpec(
        area=scopes.COMMENTS,
        path="comments",
        kind="collection",
        model=m.Comment,
        description="Comments on courses, posts and lessons (read-only).",
    ),
    AreaSpec(
        area=scopes.LECTURERS,
        path="lecturers",
        kind="collection",
        model=m.Lecturer,
        label="name",
        public=True,
        unique="slug",
        private_fields=("email",),
        description="Lecturers and their public profiles.",
    ),
    AreaSpec(
        area=scopes.FORMS,
        path="forms",
        kind="collection",
        model=m.Form,
        label="title",
        description="Forms and their submission counts (read-only).",
    ),
    AreaSpec(
        area=scopes.PAGES,
        path="pages",
        kind="collection",
        model=m.Page,
        label="title",
        public=True,
        unique="slug",
        description="Pages of the school's site.",
    ),
    AreaSpec(
        area=scopes.SCHOOL,
        path="school",
        kind="singleton",
        model=m.School,
        from_school=lambda school: {"name": school.name},
        description="The school's settings.",
    ),
    AreaSpec(
        area=scopes.APPEARANCE,
        path="appearance",
        kind="singleton",
        model=m.Appearance,
        description="The look of the school's site.",
    ),
    AreaSpec(
        area=scopes.ACCOUNT,
        path="account",
        kind="singleton",
        model=m.Account,
        per_user=True,
        description="The calling user's own account settings.",
    ),
    AreaSpec(
        area=scopes.ANALYTICS,
        path="analytics",
        kind="computed",
        description="Figures computed from the school's data over a period.",
    ),
    AreaSpec(area=scopes.STORAGE, path="storage/files", kind="upload", description="File uploads (write-only)."),
)

BY_PATH: dict[str, AreaSpec] = {a.path: a for a in AREA_SPECS}
BY_NAME: dict[str, AreaSpec] = {a.name: a for a in AREA_SPECS}
