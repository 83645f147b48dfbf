"""Scopes in the words a person approving access reads: one line per area (its read
and write merged), the identity scopes as one line, changes and personal data marked.
An agent asking for every scope gets twenty-one lines, not thirty-eight codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from courseschool.common.scopes import AREAS, IDENTITY_SCOPES, Area

_IDENTITY = tuple(s.name for s in IDENTITY_SCOPES)


class ScopeLine(msgspec.Struct, frozen=True, kw_only=True):
    title: str  # "Courses"
    access: str  # "see and change", "see", "change"
    detail: str  # what exactly, in plain words
    changes: bool  # the app may change or delete data
    about_people: bool  # personal data of students, members, customers or the user
    scopes: tuple[str, ...]  # the scope names behind the line, for the curious


def scope_lines(names: Iterable[str]) -> list[ScopeLine]:
    """The lines for a set of scope names, in the registry's order."""
    wanted = set(names)
    lines = []
    identity = [n for n in _IDENTITY if n in wanted]
    if identity:
        lines.append(_identity_line(identity))
    for area in AREAS:
        accesses = [a for a in area.accesses if f"{area.name}:{a}" in wanted]
        if accesses:
            lines.append(_area_line(area, accesses))
    return lines


def powerful_first(lines: list[ScopeLine]) -> list[ScopeLine]:
    """The lines that let an app change data before those that let it look: the
    powerful ones set apart at the top."""
    return [line for line in lines if line.changes] + [line for line in lines if not line.changes]


def _identity_line(names: list[str]) -> ScopeLine:
    parts = []
    if "profile" in names:
        parts.append("your name")
    if "email" in names:
        parts.append("your email address")
    detail = "Know who you are" + (f" and see {' and '.join(parts)}" if parts else " (your account id)")
    return ScopeLine(
        title="Your identity",
        access="see",
        detail=detail,
        changes=False,
        about_people=bool(parts),
        scopes=tuple(names),
    )


def _area_line(area: Area, accesses: Sequence[str]) -> ScopeLine:
    reads, writes = "read" in accesses, "write" in accesses
    access = "see and change" if reads and writes else "see" if reads else "change"
    details = ([f"see {area.sees}"] if reads else []) + ([area.changes] if writes else [])
    detail = "; ".join(details)
    return ScopeLine(
        title=area.label[0].upper() + area.label[1:],
        access=access,
        detail=detail[0].upper() + detail[1:],
        changes=writes,
        about_people=area.about_people,
        scopes=tuple(f"{area.name}:{a}" for a in accesses),
    )
