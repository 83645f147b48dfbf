"""The fields of every resource area, validated with msgspec.

These are the writable (or, for read-only areas, stored) fields; `id`, `school_id`,
`created_at` and `updated_at` are added by the generic mechanism. Amounts are integers
in minor units (cents) with an ISO 4217 currency, as payment systems keep them.

Every field carries a description and an example (`Meta`); the OpenAPI document at
`/openapi.json` is made from them, so they say what a client needs to know: units,
formats, defaults. The annotations change no validation.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

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
Id = Annotated[
    str,
    Meta(
        pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", extra_json_schema={"format": "uuid"}
    ),
]
Color = Annotated[str, Meta(pattern=r"^#[0-9a-fA-F]{6}$")]

_STRICT = {"forbid_unknown_fields": True, "kw_only": True}


def doc(description: str, example: Any) -> Meta:
    """A field's description and one example, for the API description only."""
    return Meta(description=description, examples=[example])


# Example ids, one per kind of thing, so that examples that refer to each other agree.
COURSE_ID = "3f1c2a9e-8b7d-4e61-9a05-2c4d6e8f0a17"
LECTURER_ID = "7b2e4c6a-1d3f-4a5b-8c9d-0e1f2a3b4c5d"
PLAN_ID = "c4a1e2b3-5d6f-4789-a0b1-c2d3e4f5a6b7"
MEMBER_ID = "9d8c7b6a-5e4f-4321-b0a9-8f7e6d5c4b3a"
POST_ID = "51e2d3c4-b5a6-4978-8f0e-1d2c3b4a5968"
PRODUCT_ID = "e1f2a3b4-c5d6-4e7f-8091-a2b3c4d5e6f7"

_CURRENCY = "ISO 4217 code of the currency (three capital letters)."
_SLUG = (
    "Unique within the school, lower-case letters, digits and single hyphens; "
    "it names the {} in the school's site addresses."
)


def _money(what: str, currency: str = "`currency`") -> str:
    return f"{what}, an integer in minor units of {currency} (cents: 4900 is 49.00 EUR), from 0 to 100000000."


class Course(Struct, **_STRICT):
    title: Annotated[Title, doc("The course's title, 1 to 200 characters.", "Watercolour for beginners")]
    slug: Annotated[Slug, doc(_SLUG.format("course"), "watercolour-for-beginners")]
    description: Annotated[
        Text,
        doc(
            "What the course teaches; plain text or Markdown, at most 20000 characters.",
            "Six weeks of washes, wet-on-wet and glazing, one painting a week.",
        ),
    ] = ""
    price: Annotated[Money, doc(_money("The price"), 4900)] = 0
    currency: Annotated[Currency, doc(_CURRENCY + " The currency of `price`.", "EUR")] = "EUR"
    level: Annotated[Literal["beginner", "intermediate", "advanced"], doc("Who the course is for.", "beginner")] = (
        "beginner"
    )
    lecturer_ids: Annotated[
        list[Id],
        Meta(max_length=20),
        doc("Ids (UUID) of the school's lecturers who teach the course, at most 20.", [LECTURER_ID]),
    ] = []
    published: Annotated[bool, doc("Whether the course is in the public catalogue.", True)] = False


class Enrollment(Struct, **_STRICT):
    """A student's place on one course."""

    course_id: Annotated[Id, doc("Id (UUID) of the course.", COURSE_ID)]
    enrolled_at: Annotated[dt.datetime, doc("When the student enrolled (RFC 3339 date-time).", "2025-01-15T09:30:00Z")]
    progress_percent: Annotated[
        int, Meta(ge=0, le=100), doc("How much of the course the student has completed, in percent (0 to 100).", 40)
    ] = 0


class Student(Struct, **_STRICT):
    name: Annotated[Title, doc("The student's full name.", "Ada Lovelace")]
    email: Annotated[Email, doc("The student's email address, unique within the school.", "ada@example.com")]
    enrollments: Annotated[
        list[Enrollment], Meta(max_length=500), Meta(description="The courses the student is enrolled on, at most 500.")
    ] = []


class Member(Struct, **_STRICT):
    name: Annotated[Title, doc("The member's full name.", "Grace Hopper")]
    email: Annotated[Email, doc("The member's email address, unique within the school.", "grace@example.com")]
    plan_id: Annotated[Id | None, doc("Id (UUID) of the member's membership plan; null: none.", PLAN_ID)] = None
    status: Annotated[Literal["active", "paused", "cancelled"], doc("The membership's state.", "active")] = "active"
    joined_at: Annotated[
        dt.datetime | None, doc("When the member joined (RFC 3339 date-time); null: not known.", "2024-11-02T18:00:00Z")
    ] = None


class Lesson(Struct, **_STRICT):
    """One lesson of a section."""

    title: Annotated[Title, doc("The lesson's title, 1 to 200 characters.", "Mixing a flat wash")]
    kind: Annotated[Literal["video", "text", "quiz", "assignment"], doc("What the lesson is.", "video")] = "text"
    duration_minutes: Annotated[
        int, Meta(ge=0, le=1440), doc("Expected length in minutes (0 to 1440; 0: not stated).", 12)
    ] = 0
    free_preview: Annotated[bool, doc("Whether anyone may watch or read it without buying the course.", True)] = False


class Section(Struct, **_STRICT):
    """A titled group of lessons, in order."""

    title: Annotated[Title, doc("The section's title, 1 to 200 characters.", "First washes")]
    lessons: Annotated[
        list[Lesson], Meta(max_length=200), Meta(description="The section's lessons in teaching order, at most 200.")
    ] = []


class Curriculum(Struct, **_STRICT):
    """The ordered sections and lessons of one course (one curriculum per course)."""

    course_id: Annotated[Id, doc("Id (UUID) of the course; a course has at most one curriculum.", COURSE_ID)]
    sections: Annotated[
        list[Section], Meta(max_length=100), Meta(description="The sections in teaching order, at most 100.")
    ] = []


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


class Event(Struct, **_STRICT):
    title: Annotated[Title, doc("The event's title, 1 to 200 characters.", "Open studio evening")]
    slug: Annotated[Slug, doc(_SLUG.format("event"), "open-studio-evening")]
    starts_at: Annotated[dt.datetime, doc("When the event starts (RFC 3339 date-time).", "2025-06-12T18:00:00Z")]
    ends_at: Annotated[
        dt.datetime | None,
        doc("When it ends (RFC 3339 date-time, not before `starts_at`); null: not stated.", "2025-06-12T20:00:00Z"),
    ] = None
    description: Annotated[
        Text,
        doc(
            "What happens at the event; at most 20000 characters.",
            "Paint alongside the lecturers and bring your questions.",
        ),
    ] = ""
    location: Annotated[
        ShortText,
        doc(
            "Where it takes place, free text of at most 500 characters; empty for online events.",
            "Studio 2, 14 Canal Street",
        ),
    ] = ""
    online_url: Annotated[
        Url | None,
        doc("Where to join online (http or https URL); null: not online.", "https://meet.example.com/open-studio"),
    ] = None
    capacity: Annotated[
        Annotated[int, Meta(ge=0, le=1_000_000)] | None,
        doc("How many people may attend (0 to 1000000); null: no limit.", 30),
    ] = None
    published: Annotated[bool, doc("Whether the event is in the public catalogue.", True)] = False


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
    currency: Annotated[Currency, doc(_CURRENCY + " The currency of `price`.", "EUR")] = "EUR"
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


class Post(Struct, **_STRICT):
    title: Annotated[Title, doc("The post's title, 1 to 200 characters.", "Five brushes worth buying")]
    slug: Annotated[Slug, doc(_SLUG.format("post"), "five-brushes-worth-buying")]
    body: Annotated[
        Text,
        doc(
            "The post itself; plain text or Markdown, at most 20000 characters.",
            "A round size 8 does most of the work...",
        ),
    ] = ""
    excerpt: Annotated[
        ShortText,
        doc("A summary for lists and previews, at most 500 characters.", "What we use in the studio, and why."),
    ] = ""
    author_id: Annotated[Id | None, doc("Id (UUID) of the lecturer who wrote it; null: the school.", LECTURER_ID)] = (
        None
    )
    published: Annotated[bool, doc("Whether the post is in the public catalogue.", True)] = False
    published_at: Annotated[
        dt.datetime | None,
        doc("The publication date shown with the post (RFC 3339 date-time); null: none shown.", "2025-02-20T08:00:00Z"),
    ] = None


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
    currency: Annotated[Currency, doc(_CURRENCY + " The currency of `price`.", "EUR")] = "EUR"
    file_url: Annotated[
        Url | None,
        doc(
            "Where the file is (http or https URL, for instance one from "
            "/api/v1/storage/files); null: not uploaded yet.",
            "https://files.example.com/colour-mixing-chart.pdf",
        ),
    ] = None
    published: Annotated[bool, doc("Whether the product is in the public catalogue.", True)] = False


class Comment(Struct, **_STRICT):
    target_type: Annotated[Literal["course", "post"], doc("What the comment is on.", "post")]
    target_id: Annotated[Id, doc("Id (UUID) of the course or post commented on.", POST_ID)]
    author_name: Annotated[Title, doc("The name the author gave.", "Ada Lovelace")]
    body: Annotated[
        str,
        Meta(min_length=1, max_length=5000),
        doc("The comment, 1 to 5000 characters of plain text.", "The size 8 tip saved me a fortune."),
    ]
    approved: Annotated[bool, doc("Whether a moderator approved it for display.", True)] = False


class Lecturer(Struct, **_STRICT):
    name: Annotated[Title, doc("The lecturer's full name.", "Mary Cassatt")]
    slug: Annotated[Slug, doc(_SLUG.format("lecturer's profile"), "mary-cassatt")]
    bio: Annotated[
        Text,
        doc("The public biography; at most 20000 characters.", "Painter and teacher, twenty years of studio practice."),
    ] = ""
    email: Annotated[
        Email | None,
        doc("The lecturer's email address; null: none. Part of the public profile once published.", "mary@example.com"),
    ] = None
    photo_url: Annotated[
        Url | None, doc("Portrait photo (http or https URL); null: none.", "https://files.example.com/mary-cassatt.jpg")
    ] = None
    published: Annotated[bool, doc("Whether the profile is in the public catalogue.", True)] = False


class FormField(Struct, **_STRICT):
    """One input of a form."""

    name: Annotated[
        str,
        Meta(pattern=r"^[a-z][a-z0-9_]{0,63}$"),
        doc(
            "The key the answer is stored under: a lower-case letter, then up to 63 lower-case "
            "letters, digits or underscores.",
            "email",
        ),
    ]
    label: Annotated[Title, doc("What the visitor sees next to the input.", "Your email address")]
    type: Annotated[
        Literal["text", "email", "textarea", "number", "checkbox", "select"], doc("The kind of input.", "email")
    ] = "text"
    required: Annotated[bool, doc("Whether the form can be sent without it.", True)] = False


class Form(Struct, **_STRICT):
    title: Annotated[Title, doc("The form's title, 1 to 200 characters.", "Newsletter sign-up")]
    fields: Annotated[
        list[FormField], Meta(max_length=50), Meta(description="The form's inputs in display order, at most 50.")
    ] = []
    submission_count: Annotated[int, Meta(ge=0), doc("How many times the form has been sent.", 128)] = 0


class Page(Struct, **_STRICT):
    title: Annotated[Title, doc("The page's title, 1 to 200 characters.", "About the school")]
    slug: Annotated[Slug, doc(_SLUG.format("page"), "about")]
    body: Annotated[
        Text,
        doc(
            "The page's content; plain text or Markdown, at most 20000 characters.",
            "We have taught painting in small groups since 2012.",
        ),
    ] = ""
    published: Annotated[bool, doc("Whether the page is in the public catalogue.", True)] = False


_LOCALE = "Language of {}: an ISO 639-1 code, optionally with an ISO 3166-1 region (`de`, `en-GB`)."


class School(Struct, **_STRICT):
    name: Annotated[Title, doc("The school's name, 1 to 200 characters.", "Canal Street Painting School")]
    description: Annotated[
        Text,
        doc(
            "What the school is about; at most 20000 characters.",
            "Painting courses in small groups, in the studio and online.",
        ),
    ] = ""
    contact_email: Annotated[
        Email | None, doc("Where customers write to; null: none published.", "hello@example.com")
    ] = None
    timezone: Annotated[
        str, Meta(max_length=64), doc("The school's IANA time zone name, at most 64 characters.", "Europe/Berlin")
    ] = "UTC"
    locale: Annotated[str, Meta(pattern=r"^[a-z]{2}(-[A-Z]{2})?$"), doc(_LOCALE.format("the school's site"), "de")] = (
        "en"
    )
    currency: Annotated[Currency, doc(_CURRENCY + " The school's default currency for new prices.", "EUR")] = "EUR"


class Appearance(Struct, **_STRICT):
    theme: Annotated[
        Literal["light", "dark", "auto"], doc("Colour scheme of the site; `auto` follows the visitor's system.", "auto")
    ] = "auto"
    primary_color: Annotated[Color, doc("Accent colour as `#rrggbb` hex.", "#2f5bd3")] = "#2f5bd3"
    logo_url: Annotated[
        Url | None,
        doc(
            "The school's logo (http or https URL); null: the name is shown instead.",
            "https://files.example.com/logo.png",
        ),
    ] = None
    font: Annotated[Literal["system", "serif", "sans", "mono"], doc("The site's typeface family.", "serif")] = "system"


class Account(Struct, **_STRICT):
    """The calling user's own account settings at the school."""

    display_name: Annotated[
        str,
        Meta(max_length=200),
        doc("The name shown to others, at most 200 characters; empty: the user's name.", "Ada L."),
    ] = ""
    bio: Annotated[
        Text, doc("A few words about the user; at most 20000 characters.", "Learning watercolour on Sunday mornings.")
    ] = ""
    locale: Annotated[
        str, Meta(pattern=r"^[a-z]{2}(-[A-Z]{2})?$"), doc(_LOCALE.format("the user's emails and pages"), "en-GB")
    ] = "en"
    email_notifications: Annotated[bool, doc("Whether the school may email the user about activity.", True)] = True


def schema_of(model: type[Struct]) -> dict:
    return msgspec.json.schema(model)
