"""What the school publishes and collects: events, posts, comments, forms, pages."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from msgspec import Meta, Struct

from .base import _SLUG, _STRICT, LECTURER_ID, POST_ID, Id, ShortText, Slug, Text, Title, Url, doc


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
