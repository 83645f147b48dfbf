"""Scopes in the words a person approving access reads: one line per area (its read
and write merged), the identity scopes as one line, changes and personal data marked.
An agent asking for every scope gets twenty-one lines, not thirty-eight codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from courseschool.common.scopes import AREAS, IDENTITY_SCOPES, Area

_IDENTITY = tuple(s.name for s in IDENTITY_SCOPES)


class ScopeLine(msgspec.Struct, frozen=True, kw_only=True):
    key: str  # "identity", or the area's name: what the consent form's choices name
    title: str  # "Courses"
    access: str  # "see and change", "see", "change"
    detail: str  # what exactly, in plain words
    changes: bool  # the app may change or delete data
    about_people: bool  # personal data of students, members, customers or the user
    scopes: tuple[str, ...]  # the scope names behind the line, for the curious

    @property
    def change_part(self) -> tuple[str, ...]:
        """The scopes that may be unticked apart from the rest of the line: its write
        scopes, when the line also lets the app see (an area only written has one part)."""
        writes = tuple(s for s in self.scopes if s.endswith(":write"))
        return writes if len(writes) < len(self.scopes) else ()


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


def sweeping_changes(lines: Sequence[ScopeLine]) -> list[str] | None:
    """When the lines would let an app change people's data in several areas at once
    (an agent asking for every scope), the areas it could change, people's first, for
    one line at the top of the page; None otherwise."""
    changing = [line for line in lines if line.changes]
    people = [line for line in changing if line.about_people]
    if len(people) < 2 or len(changing) < 3:
        return None
    ordered = people + [line for line in changing if not line.about_people]
    return [line.title.lower() for line in ordered]


def changes_almost_everything(areas: Sequence[str]) -> bool:
    """Whether the areas named are most of those an app could change at all."""
    writable = sum(1 for area in AREAS if "write" in area.accesses)
    return len(areas) * 4 >= writable * 3


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
        key="identity",
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
        key=area.name,
        title=area.label[0].upper() + area.label[1:],
        access=access,
        detail=detail[0].upper() + detail[1:],
        changes=writes,
        about_people=area.about_people,
        scopes=tuple(f"{area.name}:{a}" for a in accesses),
    )


def chosen_scopes(
    offered: Iterable[str], keep: Sequence[str], keep_changes: Sequence[str], has_changes: Sequence[str]
) -> list[str]:
    """The scopes a consent form left ticked, out of those its page `offered`. Each box
    sends the scope names it stands for: a line's box all of the line's (`keep`), a change
    part's box its write scopes (`keep_changes`), and beside each change part a hidden
    field names them again (`has_changes`), so an unticked change part is known. What a
    ticked line holds is granted, less the change parts that were offered and unticked. A
    box naming a scope the page did not offer, or a change part the page did not show, is a
    tampered form: ValueError, and nothing is granted."""
    offered_names = list(offered)
    named = {
        kind: {n for value in values for n in value.split()}
        for kind, values in (("keep", keep), ("keep_changes", keep_changes), ("has_changes", has_changes))
    }
    strangers = sorted(set().union(*named.values()) - set(offered_names))
    if strangers:
        raise ValueError(f"the form names what the page did not offer: {', '.join(strangers)}")
    partless = sorted(named["keep_changes"] - named["has_changes"])
    if partless:
        raise ValueError(f"the form ticks a change part the page does not have: {', '.join(partless)}")
    dropped = named["has_changes"] - named["keep_changes"]
    return [s for s in offered_names if s in named["keep"] and s not in dropped]
