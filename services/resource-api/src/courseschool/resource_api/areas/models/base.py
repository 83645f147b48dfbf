"""What the models of every area share: constrained types, the example ids, doc()."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

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


# The `currency` field beside a `price` (courses, plans, digital products): one declaration.
PriceCurrency = Annotated[Currency, doc(_CURRENCY + " The currency of `price`.", "EUR")]


def _money(what: str, currency: str = "`currency`") -> str:
    return f"{what}, an integer in minor units of {currency} (cents: 4900 is 49.00 EUR), from 0 to 100000000."
