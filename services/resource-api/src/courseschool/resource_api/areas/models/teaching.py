"""Courses, their students, members, curriculum and lecturers."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from msgspec import Meta, Struct

from .base import (
    _SLUG,
    _STRICT,
    COURSE_ID,
    LECTURER_ID,
    PLAN_ID,
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
    currency: PriceCurrency = "EUR"
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
