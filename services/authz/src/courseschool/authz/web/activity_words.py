"""What an app did, in the words of the apps pages: "read courses 120 times, students 4
times; changed 3 students", the changed items (newest first, by name where the area
names its items) and when it last acted. Built from the resource API's record
(`authz/activity.py`); a page with no record to show says so instead."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import msgspec

from courseschool.common.activity import ChangedItem, GrantActivity
from courseschool.common.scopes import AREAS

_LABELS = {area.name: area.label for area in AREAS}
_DONE = {"create": "added", "update": "changed", "delete": "removed"}


class ChangeLine(msgspec.Struct, frozen=True, kw_only=True):
    what: str  # "changed student «Ada Lovelace»"
    at: int


class ActivityView(msgspec.Struct, frozen=True, kw_only=True):
    reads: str | None  # "read courses 120 times, students 4 times"
    changes: str | None  # "changed 3 students, 1 course"
    changed: list[ChangeLine]  # newest first
    last_acted: int | None


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _at(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso).timestamp())


def _change(item: ChangedItem) -> ChangeLine:
    label = _LABELS.get(item.area, item.area.replace("_", " "))
    name = f" «{item.name}»" if item.name else ""
    return ChangeLine(what=f"{_DONE.get(item.action, item.action)} in {label}{name}", at=_at(item.at))


def activity_view(activities: Iterable[GrantActivity]) -> ActivityView:
    """One view of one or more grants' activity (a sign-in's, or a person's at an app)."""
    reads: dict[str, int] = {}
    changes: dict[str, int] = {}
    changed: list[ChangedItem] = []
    last: str | None = None
    for one in activities:
        for area, n in one.reads.items():
            reads[area] = reads.get(area, 0) + n
        for area, n in one.changes.items():
            changes[area] = changes.get(area, 0) + n
        changed += one.changed
        if one.last_acted is not None and (last is None or _at(one.last_acted) > _at(last)):
            last = one.last_acted
    order = [a.name for a in AREAS]
    by_area = sorted(reads, key=lambda a: (-reads[a], order.index(a) if a in order else len(order)))
    read_words = ", ".join(f"{_LABELS.get(a, a)} {_times(reads[a])}" for a in by_area)
    change_words = ", ".join(f"{n} in {_LABELS.get(a, a)}" for a, n in sorted(changes.items(), key=lambda x: -x[1]))
    changed.sort(key=lambda item: _at(item.at), reverse=True)
    return ActivityView(
        reads=f"read {read_words}" if read_words else None,
        changes=f"changed {sum(changes.values())} ({change_words})" if changes else None,
        changed=[_change(item) for item in changed[:10]],
        last_acted=_at(last) if last is not None else None,
    )
