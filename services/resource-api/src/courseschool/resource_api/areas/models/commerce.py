"""What the school sells: orders, membership plans, coupons, subscriptions, digital products."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from msgspec import Meta, Struct

from .base import (
    _CURRENCY,
    _SLUG,
    _STRICT,
    COURSE_ID,
    MEMBER_ID,
    PLAN_ID,
    Currency,
    Email,
    Id,
    Money,
    PriceCurrency,
    Slug,
    Text,
    Title,
    Url,
    _money,
    doc,
)


class OrderItem(Struct, **_STRICT):
    """One line of an order."""

    product_type: Annotated[
        Literal["course", "digital_product", "membership_plan", "event"],
        doc("What kind of product was bought.", "course"),
    ]
    product_id: Annotated[Id, doc("Id (UUID) of the product, in the area `product_type` names.", COURSE_ID)]
    title: Annotated[Title, doc("The product's title at the time of the order.", "Watercolour for beginners")]
    quantity: Annotated[int, Meta(ge=1, le=1000), doc("How many were bought (1 to 1000).", 1)] = 1
    unit_price: Annotated[Money, doc(_money("The price of one unit", "the order's `currency`"), 4900)] = 0


class Order(Struct, **_STRICT):
    number: Annotated[
        str,
        Meta(min_length=1, max_length=40),
        doc("The order number shown to the customer, unique within the school.", "CS-2025-0042"),
    ]
    customer_email: Annotated[Email, doc("The buyer's email address.", "ada@example.com")]
    items: Annotated[
        list[OrderItem], Meta(min_length=1, max_length=100), Meta(description="The order's lines, 1 to 100.")
    ]
    subtotal: Annotated[Money, doc(_money("The sum of quantity x unit_price over the items"), 4900)]
    discount: Annotated[Money, doc(_money("The discount taken off the subtotal"), 490)] = 0
    total: Annotated[Money, doc(_money("What the customer pays: subtotal minus discount"), 4410)] = 0
    currency: Annotated[Currency, doc(_CURRENCY + " The currency of every amount of the order.", "EUR")] = "EUR"
    coupon_code: Annotated[str | None, doc("The coupon the customer redeemed; null: none.", "SPRING10")] = None
    status: Annotated[Literal["pending", "paid", "refunded", "cancelled"], doc("The order's state.", "paid")] = (
        "pending"
    )
    placed_at: Annotated[
        dt.datetime | None, doc("When the order was placed (RFC 3339 date-time).", "2025-03-01T10:15:00Z")
    ] = None


class MembershipPlan(Struct, **_STRICT):
    name: Annotated[Title, doc("The plan's name, 1 to 200 characters.", "Studio membership")]
    slug: Annotated[Slug, doc(_SLUG.format("plan"), "studio-membership")]
    description: Annotated[
        Text,
        doc(
            "What members get; at most 20000 characters.",
            "Every course, monthly live critiques and the members' forum.",
        ),
    ] = ""
    price: Annotated[Money, doc(_money("The price per `interval`"), 1900)] = 0
    currency: PriceCurrency = "EUR"
    interval: Annotated[Literal["month", "year"], doc("How often the price is charged.", "month")] = "month"
    published: Annotated[bool, doc("Whether the plan is in the public catalogue.", True)] = False


class Coupon(Struct, **_STRICT):
    code: Annotated[
        str,
        Meta(min_length=3, max_length=40, pattern=r"^[A-Z0-9_-]+$"),
        doc(
            "What customers type at checkout: 3 to 40 capital letters, digits, `_` or `-`; unique within the school.",
            "SPRING10",
        ),
    ]
    discount_type: Annotated[
        Literal["percent", "fixed"],
        doc(
            "`percent`: `amount` is a percentage (at most 100); `fixed`: `amount` is "
            "money in minor units of `currency`.",
            "percent",
        ),
    ] = "percent"
    amount: Annotated[
        int,
        Meta(ge=1, le=100_000_000),
        doc(
            "The discount: a percentage (1 to 100) for `percent`; for `fixed`, an integer in "
            "minor units of `currency` (500 is 5.00 EUR).",
            10,
        ),
    ] = 10
    currency: Annotated[
        Currency | None, doc(_CURRENCY + " Required for `fixed` discounts; null for `percent`.", "EUR")
    ] = None
    valid_from: Annotated[
        dt.datetime | None,
        doc("First moment the coupon may be redeemed (RFC 3339 date-time); null: at once.", "2025-03-01T00:00:00Z"),
    ] = None
    valid_until: Annotated[
        dt.datetime | None,
        doc(
            "Last moment it may be redeemed (RFC 3339 date-time, not before `valid_from`); null: no end.",
            "2025-03-31T23:59:59Z",
        ),
    ] = None
    max_redemptions: Annotated[
        Annotated[int, Meta(ge=1)] | None, doc("How many times it may be redeemed in all; null: no limit.", 100)
    ] = None
    active: Annotated[bool, doc("Whether it may be redeemed at all.", True)] = True


class Subscription(Struct, **_STRICT):
    member_id: Annotated[Id, doc("Id (UUID) of the subscribing member.", MEMBER_ID)]
    plan_id: Annotated[Id, doc("Id (UUID) of the membership plan.", PLAN_ID)]
    status: Annotated[
        Literal["trialing", "active", "past_due", "cancelled"], doc("The subscription's state.", "active")
    ] = "active"
    started_at: Annotated[dt.datetime | None, doc("When it started (RFC 3339 date-time).", "2025-01-01T00:00:00Z")] = (
        None
    )
    renews_at: Annotated[
        dt.datetime | None,
        doc("When it is next charged (RFC 3339 date-time); null: it does not renew.", "2025-02-01T00:00:00Z"),
    ] = None
    cancelled_at: Annotated[
        dt.datetime | None, doc("When it was cancelled (RFC 3339 date-time); null: not cancelled.", None)
    ] = None


class DigitalProduct(Struct, **_STRICT):
    title: Annotated[Title, doc("The product's title, 1 to 200 characters.", "Colour-mixing chart (PDF)")]
    slug: Annotated[Slug, doc(_SLUG.format("product"), "colour-mixing-chart")]
    description: Annotated[
        Text, doc("What the buyer gets; at most 20000 characters.", "A printable chart of 144 two-colour mixes.")
    ] = ""
    price: Annotated[Money, doc(_money("The price"), 900)] = 0
    currency: PriceCurrency = "EUR"
    file_url: Annotated[
        Url | None,
        doc(
            "Where the file is (http or https URL, for instance one from "
            "/api/v1/storage/files); null: not uploaded yet.",
            "https://files.example.com/colour-mixing-chart.pdf",
        ),
    ] = None
    published: Annotated[bool, doc("Whether the product is in the public catalogue.", True)] = False
