"""The demo school's site: posts, forms, pages, and the school-wide and account
settings. Fixed data; `school.py` writes it. Posts name lecturers by slug; offsets
are in days from `now` (negative: in the past)."""

from __future__ import annotations

from typing import Any

from .catalogue import Rows

POSTS: Rows = (  # author_id names a lecturer by slug; published_at is an offset
    {
        "title": "Welcome to Demo Course School",
        "slug": "welcome",
        "author_id": "priya-raman",
        "published_at": -88,
        "excerpt": "Who we are and what you can learn here.",
        "body": "We started this school to teach practical skills in small, friendly classes. Have a look around!",
    },
    {
        "title": "Five Python habits worth building early",
        "slug": "five-python-habits",
        "author_id": "ana-novak",
        "published_at": -55,
        "excerpt": "Small habits that make your code easier to read and to fix.",
        "body": "Name things well, write small functions, read error messages slowly, test early, and commit often.",
    },
    {
        "title": "Choosing your first watercolour paper",
        "slug": "choosing-watercolour-paper",
        "author_id": "marco-bianchi",
        "published_at": -29,
        "excerpt": "Cotton, cellulose, hot or cold pressed?",
        "body": "Paper matters more than paint. Start with 300 g/m² cold-pressed cotton paper and you will see why.",
    },
    {
        "title": "What our students built this spring",
        "slug": "student-projects-spring",
        "author_id": "priya-raman",
        "published_at": -8,
        "excerpt": "Quiz games, bike-trip dashboards and a lot of sunsets.",
        "body": "Every term we are amazed by the projects. Here are a few of our favourites, shared with permission.",
    },
    {
        "title": "Coming soon: Machine Learning in Practice",
        "slug": "coming-soon-machine-learning",
        "author_id": "priya-raman",
        "published_at": None,
        "excerpt": "Our first advanced data course.",
        "body": "Draft: announce the course once the last module is recorded.",
    },
)

# (target type, target slug, author name, body, approved)


FORMS: Rows = (
    {
        "title": "Contact us",
        "submission_count": 23,
        "fields": [
            {"name": "name", "label": "Your name", "type": "text", "required": True},
            {"name": "email", "label": "Email address", "type": "email", "required": True},
            {"name": "message", "label": "Message", "type": "textarea", "required": True},
        ],
    },
    {
        "title": "Course waiting list",
        "submission_count": 41,
        "fields": [
            {"name": "email", "label": "Email address", "type": "email", "required": True},
            {"name": "course", "label": "Which course are you waiting for?", "type": "select", "required": True},
            {"name": "newsletter", "label": "Also send me the monthly newsletter", "type": "checkbox"},
        ],
    },
)


PAGES: Rows = (
    {
        "title": "About us",
        "slug": "about",
        "published": True,
        "body": "Demo Course School teaches programming, data and visual arts in small online classes.",
    },
    {
        "title": "Contact",
        "slug": "contact",
        "published": True,
        "body": "Write to hello@demo-course-school.example or use the contact form; we answer within two days.",
    },
    {
        "title": "Terms of service",
        "slug": "terms",
        "published": True,
        "body": "By buying a course you get lifetime access to it for personal use. Refunds within 14 days.",
    },
    {
        "title": "Privacy policy",
        "slug": "privacy",
        "published": True,
        "body": "We keep only the data needed to run your courses and never sell it to anyone.",
    },
)


SCHOOL: dict[str, Any] = {
    "name": "Demo Course School",
    "description": "Practical online courses in programming, data and visual arts.",
    "contact_email": "hello@demo-course-school.example",
    "timezone": "Europe/Rome",
    "locale": "en",
    "currency": "EUR",
}


APPEARANCE: dict[str, Any] = {"theme": "light", "primary_color": "#2f5bd3", "font": "sans"}


ACCOUNT: dict[str, Any] = {
    "display_name": "School owner",
    "bio": "I run Demo Course School.",
    "locale": "en",
    "email_notifications": True,
}
