"""What a school's app policy lets an app have (protocol/school_policy.py), rule by rule:
the scopes given are already within the person's role; the school splits them into what
the app may have now and what needs the school's approval."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.school_policy import Standing, school_allows

from .factories import make_client

ASKED = ["openid", "profile", "courses:read", "courses:write", "events:read", "events:write"]


@pytest.mark.parametrize(
    ("standing", "allowed", "needs"),
    [
        (Standing(policy="anyone"), ASKED, []),
        (
            Standing(policy="read_only"),
            ["openid", "profile", "courses:read", "events:read"],
            ["courses:write", "events:write"],
        ),
        (Standing(policy="read_only", approved=True), ASKED, []),
        (
            Standing(policy="read_only", approved=True, approved_scope=frozenset({"courses:write"})),
            ["openid", "profile", "courses:read", "courses:write", "events:read"],
            ["events:write"],
        ),
        (Standing(policy="approved_only"), [], ["courses:read", "courses:write", "events:read", "events:write"]),
        (Standing(policy="approved_only", approved=True), ASKED, []),
        (
            Standing(policy="approved_only", approved=True, approved_scope=frozenset({"courses:read"})),
            ["openid", "profile", "courses:read"],
            ["courses:write", "events:read", "events:write"],
        ),
    ],
    ids=["anyone", "read-only", "read-only approved", "read-only approved for one change",
         "approved-only", "approved-only approved", "approved-only approved for one area"],
)  # fmt: skip
def test_the_policy_splits_what_is_asked(standing: Standing, allowed: list[str], needs: list[str]) -> None:
    word = school_allows(standing, make_client(is_integration=False), ASKED)
    assert (word.allowed, word.needs_approval) == (allowed, needs)


@pytest.mark.parametrize("policy", ["read_only", "approved_only"])
def test_an_integration_is_approved_by_construction(policy: str) -> None:
    word = school_allows(Standing(policy=policy), make_client(is_integration=True), ASKED)  # type: ignore[arg-type]
    assert (word.allowed, word.needs_approval) == (ASKED, [])
