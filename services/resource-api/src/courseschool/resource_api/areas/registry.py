"""Every resource area as a declaration: its name, path, model and rules.

The generic mechanism (`items.py`, `web/routes.py`) reads these and nothing else;
adding an area is one `AreaSpec` here (plus its scopes in the shared registry).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

from courseschool.common.scopes import AREAS as SCOPE_AREAS

from . import models as m

Kind = Literal["collection", "singleton", "computed", "upload"]


class RuleError(ValueError):
    """A value breaks a rule that spans fields (answered 422)."""


class AreaSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # the scope prefix, e.g. "membership_plans"
    path: str  # under /api/v1, e.g. "membership-plans"
    kind: Kind
    model: type[Struct] | None = None
    public: bool = False  # anonymous callers may read its published items
    unique: str | None = None  # a field unique per school (slug, code, email)
    per_user: bool = False  # a singleton kept per user (account)
    check: Callable[[dict[str, Any]], None] | None = None
    description: str = ""

    @property
    def readable(self) -> bool:
        return "read" in _accesses(self.name)

    @property
    def writable(self) -> bool:
        return "write" in _accesses(self.name)

    @property
    def read_scope(self) -> str:
        return f"{self.name}:read"

    @property
    def write_scope(self) -> str:
        return f"{self.name}:write"

    @property
    def has_published(self) -> bool:
        return self.model is not None and "published" in self.model.__struct_fields__


def _accesses(name: str) -> tuple[str, ...]:
    return next(a.accesses for a in SCOPE_AREAS if a.name == name)


def patch_type(model: type[Struct]) -> type[Struct]:
    """The model with every field optional: what a PATCH body may hold."""
    hints = typing.get_type_hints(model, include_extras=True)
    fields = [(f, hints[f] | UnsetType, UNSET) for f in model.__struct_fields__]
    return msgspec.defstruct(f"{model.__name__}Patch", fields, forbid_unknown_fields=True, kw_only=True)


def validate_document(spec: AreaSpec, data: dict[str, Any]) -> dict[str, Any]:
    """The area's model, then its cross-field rule; the JSON-ready document.
    Raises msgspec.ValidationError or RuleError."""
    assert spec.model is not None
    item = msgspec.convert(data, spec.model)
    if spec.check is not None:
        spec.check(msgspec.structs.asdict(item))
    document = msgspec.to_builtins(item)
    _no_nul(document)
    return document


def _no_nul(value: Any) -> None:
    """Postgres text cannot hold U+0000; refuse it as bad input rather than fail later."""
    if isinstance(value, str):
        if "\x00" in value:
            raise RuleError("text must not contain NUL (U+0000) characters")
    elif isinstance(value, dict):
        for item in value.values():
            _no_nul(item)
    elif isinstance(value, list):
        for item in value:
            _no_nul(item)


def _dates_in_order(start: str, end: str) -> Callable[[dict[str, Any]], None]:
    def check(item: dict[str, Any]) -> None:
        if item.get(start) and item.get(end) and item[end] < item[start]:
            raise RuleError(f"{end} must not be before {start}")

    return check


def _order_adds_up(item: dict[str, Any]) -> None:
    lines = sum(i.quantity * i.unit_price for i in item["items"])
    if item["subtotal"] != lines:
        raise RuleError("subtotal must equal the sum of quantity x unit_price over the items")
    if item["total"] != item["subtotal"] - item["discount"]:
        raise RuleError("total must equal subtotal minus discount")


def _coupon_makes_sense(item: dict[str, Any]) -> None:
    _dates_in_order("valid_from", "valid_until")(item)
    if item["discount_type"] == "percent" and item["amount"] > 100:
        raise RuleError("a percent discount is at most 100")
    if item["discount_type"] == "fixed" and item["currency"] is None:
        raise RuleError("a fixed discount needs a currency")


AREA_SPECS: tuple[AreaSpec, ...] = (
    AreaSpec(name="courses", path="courses", kind="collection", model=m.Course, public=True, unique="slug",
             description="Courses of the school, with price and lecturers."),
    AreaSpec(name="students", path="students", kind="collection", model=m.Student, unique="email",
             description="Students and their enrolments."),
    AreaSpec(name="members", path="members", kind="collection", model=m.Member, unique="email",
             description="Community members and their membership plan."),
    AreaSpec(name="curriculum", path="curriculum", kind="collection", model=m.Curriculum, unique="course_id",
             description="The ordered sections and lessons of each course."),
    AreaSpec(name="orders", path="orders", kind="collection", model=m.Order, unique="number",
             check=_order_adds_up, description="Orders placed at the school (read-only)."),
    AreaSpec(name="events", path="events", kind="collection", model=m.Event, public=True, unique="slug",
             check=_dates_in_order("starts_at", "ends_at"), description="Live and online events."),
    AreaSpec(name="membership_plans", path="membership-plans", kind="collection", model=m.MembershipPlan,
             public=True, unique="slug", description="Membership plans on sale."),
    AreaSpec(name="coupons", path="coupons", kind="collection", model=m.Coupon, unique="code",
             check=_coupon_makes_sense, description="Discount coupons."),
    AreaSpec(name="posts", path="posts", kind="collection", model=m.Post, public=True, unique="slug",
             description="Blog posts."),
    AreaSpec(name="subscriptions", path="subscriptions", kind="collection", model=m.Subscription,
             description="Recurring subscriptions of members to plans."),
    AreaSpec(name="digital_products", path="digital-products", kind="collection", model=m.DigitalProduct,
             public=True, unique="slug", description="Downloadable products."),
    AreaSpec(name="comments", path="comments", kind="collection", model=m.Comment,
             description="Comments on courses, posts and lessons (read-only)."),
    AreaSpec(name="lecturers", path="lecturers", kind="collection", model=m.Lecturer, public=True, unique="slug",
             description="Lecturers and their public profiles."),
    AreaSpec(name="forms", path="forms", kind="collection", model=m.Form,
             description="Forms and their submission counts (read-only)."),
    AreaSpec(name="pages", path="pages", kind="collection", model=m.Page, public=True, unique="slug",
             description="Pages of the school's site."),
    AreaSpec(name="school", path="school", kind="singleton", model=m.School, description="The school's settings."),
    AreaSpec(name="appearance", path="appearance", kind="singleton", model=m.Appearance,
             description="The look of the school's site."),
    AreaSpec(name="account", path="account", kind="singleton", model=m.Account, per_user=True,
             description="The calling user's own account settings."),
    AreaSpec(name="analytics", path="analytics", kind="computed",
             description="Figures computed from the school's data over a period."),
    AreaSpec(name="storage", path="storage/files", kind="upload", description="File uploads (write-only)."),
)

BY_PATH: dict[str, AreaSpec] = {a.path: a for a in AREA_SPECS}
BY_NAME: dict[str, AreaSpec] = {a.name: a for a in AREA_SPECS}
