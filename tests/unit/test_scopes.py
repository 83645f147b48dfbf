"""The scope registry against the seed document's Scopes table, and role caps."""

from __future__ import annotations

import pytest

from courseschool.common.scopes import (
    ALL_SCOPE_NAMES,
    AREAS,
    BY_NAME,
    ROLE_CAPS,
    ROLES,
    SCOPES,
    format_scope,
    parse_scope,
    unknown_scopes,
)

# /work/shared/seeds/000_02695d3f85be4705.txt, section "Scopes", in its order.
SEED_SCOPES = (
    "openid", "profile", "email",
    "courses:read", "courses:write",
    "students:read", "students:write",
    "members:read", "members:write",
    "analytics:read",
    "curriculum:read", "curriculum:write",
    "orders:read",
    "school:read", "school:write",
    "appearance:read", "appearance:write",
    "events:read", "events:write",
    "membership_plans:read", "membership_plans:write",
    "coupons:read", "coupons:write",
    "posts:read", "posts:write",
    "subscriptions:read", "subscriptions:write",
    "digital_products:read", "digital_products:write",
    "comments:read",
    "lecturers:read", "lecturers:write",
    "storage:write",
    "forms:read",
    "pages:read", "pages:write",
    "account:read", "account:write",
)  # fmt: skip

IDENTITY = {"openid", "profile", "email"}
READS = {s for s in SEED_SCOPES if s.endswith(":read")}
WRITES = {s for s in SEED_SCOPES if s.endswith(":write")}


def test_registry_holds_exactly_the_seed_scopes_in_seed_order() -> None:
    assert ALL_SCOPE_NAMES == SEED_SCOPES
    assert len(set(ALL_SCOPE_NAMES)) == len(ALL_SCOPE_NAMES) == 38
    assert set(BY_NAME) == set(SEED_SCOPES)


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.name)
def test_every_scope_has_a_non_empty_description(scope) -> None:  # type: ignore[no-untyped-def]
    assert scope.description.strip()


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("courses:read", "Read access to courses"),
        ("courses:write", "Write access to courses"),
        ("membership_plans:write", "Write access to membership plans"),
        ("digital_products:read", "Read access to digital products"),
        ("storage:write", "Write access to storage"),
    ],
)
def test_area_scope_description_follows_the_seed_wording(name: str, description: str) -> None:
    assert BY_NAME[name].description.startswith(description + ": ")


def test_read_and_write_of_an_area_say_different_things() -> None:
    for area in AREAS:
        if area.accesses == ("read", "write"):
            read, write = BY_NAME[f"{area.name}:read"].description, BY_NAME[f"{area.name}:write"].description
            assert read != write and area.sees in read and area.changes in write


@pytest.mark.parametrize(
    ("name", "area", "access"),
    [("courses:read", "courses", "read"), ("storage:write", "storage", "write"), ("openid", None, None)],
)
def test_scope_records_its_area_and_access(name: str, area: str | None, access: str | None) -> None:
    assert (BY_NAME[name].area, BY_NAME[name].access) == (area, access)


def test_roles_are_owner_admin_lecturer_student() -> None:
    assert ROLES == ("owner", "admin", "lecturer", "student")
    assert set(ROLE_CAPS) == set(ROLES)


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_owner_and_admin_may_grant_every_scope(role: str) -> None:
    assert ROLE_CAPS[role] == frozenset(SEED_SCOPES)  # type: ignore[index]


def test_lecturer_gets_identity_all_reads_and_teaching_writes() -> None:
    expected = IDENTITY | READS | {"courses:write", "curriculum:write", "posts:write", "events:write"}
    assert ROLE_CAPS["lecturer"] == frozenset(expected)


@pytest.mark.parametrize(
    "scope", ["school:write", "students:write", "coupons:write", "storage:write", "account:write", "pages:write"]
)
def test_lecturer_cannot_grant_administrative_writes(scope: str) -> None:
    assert scope not in ROLE_CAPS["lecturer"]


def test_student_gets_identity_and_own_account_only() -> None:
    assert ROLE_CAPS["student"] == frozenset({"openid", "profile", "email", "account:read", "account:write"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("openid profile", ["openid", "profile"]),
        ("profile openid", ["profile", "openid"]),  # keeps the request's order
        ("openid openid profile openid", ["openid", "profile"]),  # dedupes, first wins
        ("  openid   profile ", ["openid", "profile"]),  # extra spaces ignored
        ("", []),
        ("   ", []),
        ("courses:read x:y", ["courses:read", "x:y"]),  # parsing does not judge names
    ],
)
def test_parse_scope_dedupes_and_keeps_order(value: str, expected: list[str]) -> None:
    assert parse_scope(value) == expected


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["courses:read", "openid"], "openid courses:read"),
        (["account:write", "email", "profile", "openid"], "openid profile email account:write"),
        (frozenset({"pages:read", "courses:write"}), "courses:write pages:read"),
        (("email", "email"), "email"),
        (["nope", "openid"], "openid"),  # unknown names are not rendered
        ([], ""),
    ],
)
def test_format_scope_renders_in_canonical_registry_order(names, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert format_scope(names) == expected


def test_format_scope_of_equal_sets_is_equal() -> None:
    assert format_scope(["posts:read", "openid"]) == format_scope(["openid", "posts:read", "openid"])


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["openid", "courses:read"], []),
        (["openid", "courses:admin", "offline_access"], ["courses:admin", "offline_access"]),
        (["analytics:write", "storage:read", "OPENID"], ["analytics:write", "storage:read", "OPENID"]),
    ],
)
def test_unknown_scopes_lists_names_outside_the_registry(names: list[str], expected: list[str]) -> None:
    assert unknown_scopes(names) == expected
