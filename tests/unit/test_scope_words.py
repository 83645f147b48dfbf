"""Scopes in plain words for the pages: one line per area, identity as one line."""

from __future__ import annotations

from courseschool.authz.web.scope_words import scope_lines
from courseschool.common.scopes import ALL_SCOPE_NAMES, AREAS


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
