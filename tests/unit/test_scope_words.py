"""Scopes in plain words for the pages: one line per area, identity as one line."""

from __future__ import annotations

import pytest

from courseschool.authz.web.scope_words import changes_almost_everything, chosen_scopes, scope_lines, sweeping_changes
from courseschool.common.scopes import ALL_SCOPE_NAMES, AREAS, SCOPES


def test_every_scope_fits_in_one_line_per_area_and_one_for_identity() -> None:
    lines = scope_lines(ALL_SCOPE_NAMES)
    assert len(lines) == len(AREAS) + 1
    assert sorted(s for line in lines for s in line.scopes) == sorted(ALL_SCOPE_NAMES)


def test_read_and_write_of_an_area_merge_into_one_line() -> None:
    (line,) = scope_lines(["courses:write", "courses:read"])
    assert (line.title, line.access, line.changes) == ("Courses", "see and change", True)
    assert line.detail.startswith("See courses") and "delete courses" in line.detail
    assert line.scopes == ("courses:read", "courses:write")


def test_only_what_was_asked_is_described() -> None:
    (read,) = scope_lines(["students:read"])
    assert read.access == "see" and not read.changes and read.about_people and "remove" not in read.detail
    (write,) = scope_lines(["storage:write"])
    assert write.access == "change" and write.changes and write.detail == "Upload files to the school's storage"


def test_identity_scopes_are_one_line_about_the_person() -> None:
    (line,) = scope_lines(["email", "openid", "profile"])
    assert line.title == "Your identity" and line.scopes == ("openid", "profile", "email")
    assert "your name" in line.detail and "email address" in line.detail
    (bare,) = scope_lines(["openid"])
    assert "account id" in bare.detail and not bare.about_people


def test_unknown_names_are_left_out() -> None:
    assert scope_lines(["nope", "courses:admin"]) == []


def test_chosen_scopes_keeps_ticked_lines_and_drops_unticked_change_parts() -> None:
    offered = ["openid", "profile", "courses:read", "courses:write", "storage:write", "analytics:read"]
    lines = ["openid profile", "courses:read courses:write", "storage:write", "analytics:read"]
    everything = chosen_scopes(offered, lines, ["courses:write"], ["courses:write"])
    assert everything == offered
    without_changes = chosen_scopes(offered, lines[:3], [], ["courses:write"])
    assert without_changes == ["openid", "profile", "courses:read", "storage:write"]
    # a line unticked whole grants nothing, whatever its change part says
    assert chosen_scopes(offered, ["openid profile"], ["courses:write"], ["courses:write"]) == ["openid", "profile"]
    # a step-up page splits an area: its new write part and its read allowed before
    assert chosen_scopes(offered, ["courses:write", "courses:read"], [], []) == ["courses:read", "courses:write"]


@pytest.mark.parametrize(
    ("keep", "keep_changes", "has_changes"),
    [
        (["school:write"], [], []),  # a scope the page did not offer
        (["courses:read"], [], ["members:write"]),
        (["courses:read courses:write"], ["courses:write"], []),  # a change part the page did not show
        (["courses:read"], ["analytics:read"], ["storage:write"]),
    ],
)
def test_chosen_scopes_refuses_a_tampered_form(
    keep: list[str], keep_changes: list[str], has_changes: list[str]
) -> None:
    offered = ["openid", "courses:read", "courses:write", "storage:write", "analytics:read"]
    with pytest.raises(ValueError, match=r"did not offer|does not have"):
        chosen_scopes(offered, keep, keep_changes, has_changes)


def test_sweeping_changes_names_people_first_only_when_several_areas_change() -> None:
    assert sweeping_changes(scope_lines(["courses:write", "posts:write", "students:read"])) is None
    lines = scope_lines(["courses:write", "students:write", "members:write", "orders:read"])
    assert sweeping_changes(lines) == ["students", "members", "courses"]
    assert not changes_almost_everything(["students", "members", "courses"])
    every = scope_lines([s.name for s in SCOPES])
    named = sweeping_changes(every)
    assert named is not None and changes_almost_everything(named)
