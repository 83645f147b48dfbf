"""The school's own settings, its site's appearance, and the user's account."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from .base import _CURRENCY, _STRICT, Color, Currency, Email, Text, Title, Url, doc

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
