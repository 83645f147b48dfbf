"""The scope registry: every scope of the interface document, with its description.

All services read scopes from here: discovery lists them, the authorization server
validates and caps them, the resource API guards its routes with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Access = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class Area:
    """A resource area of the course-school API and the accesses its scopes grant."""

    name: str  # scope prefix, e.g. "membership_plans"
    label: str  # human words, e.g. "membership plans"
    accesses: tuple[Access, ...]


@dataclass(frozen=True, slots=True)
class Scope:
    name: str
    description: str
    area: str | None = None
    access: Access | None = None


AREAS: tuple[Area, ...] = (
    Area("courses", "courses", ("read", "write")),
    Area("students", "students", ("read", "write")),
    Area("members", "members", ("read", "write")),
    Area("analytics", "analytics", ("read",)),
    Area("curriculum", "curriculum", ("read", "write")),
    Area("orders", "orders", ("read",)),
    Area("school", "school", ("read", "write")),
    Area("appearance", "appearance", ("read", "write")),
    Area("events", "events", ("read", "write")),
    Area("membership_plans", "membership plans", ("read", "write")),
    Area("coupons", "coupons", ("read", "write")),
    Area("posts", "posts", ("read", "write")),
    Area("subscriptions", "subscriptions", ("read", "write")),
    Area("digital_products", "digital products", ("read", "write")),
    Area("comments", "comments", ("read",)),
    Area("lecturers", "lecturers", ("read", "write")),
    Area("storage", "storage", ("write",)),
    Area("forms", "forms", ("read",)),
    Area("pages", "pages", ("read", "write")),
    Area("account", "account", ("read", "write")),
)

IDENTITY_SCOPES: tuple[Scope, ...] = (
    Scope("openid", "Sign you in with your course-school account (OpenID Connect)"),
    Scope("profile", "See your name and username"),
    Scope("email", "See your email address"),
)


def _area_scopes() -> tuple[Scope, ...]:
    # A write scope does not include reading: reads always need the :read scope.
    verbs = {"read": "Read access to", "write": "Write access to"}
    out = []
    for area in AREAS:
        for access in area.accesses:
            out.append(Scope(f"{area.name}:{access}", f"{verbs[access]} {area.label}", area.name, access))
    return tuple(out)


SCOPES: tuple[Scope, ...] = IDENTITY_SCOPES + _area_scopes()
BY_NAME: dict[str, Scope] = {s.name: s for s in SCOPES}
ALL_SCOPE_NAMES: tuple[str, ...] = tuple(s.name for s in SCOPES)

Role = Literal["owner", "admin", "lecturer", "student"]
ROLES: tuple[Role, ...] = ("owner", "admin", "lecturer", "student")

_LECTURER_WRITES = {"courses", "curriculum", "posts", "events"}


def _role_cap(role: Role) -> frozenset[str]:
    identity = {s.name for s in IDENTITY_SCOPES}
    if role in ("owner", "admin"):
        return frozenset(ALL_SCOPE_NAMES)
    if role == "lecturer":
        return frozenset(
            identity
            | {s.name for s in SCOPES if s.access == "read"}
            | {f"{a}:write" for a in _LECTURER_WRITES}
        )
    return frozenset(identity | {"account:read", "account:write"})


ROLE_CAPS: dict[Role, frozenset[str]] = {role: _role_cap(role) for role in ROLES}


def parse_scope(value: str) -> list[str]:
    """Split a `scope` parameter (RFC 6749 §3.3) into its distinct names, in order."""
    seen: dict[str, None] = {}
    for name in value.split(" "):
        if name:
            seen.setdefault(name, None)
    return list(seen)


def unknown_scopes(names: list[str]) -> list[str]:
    return [n for n in names if n not in BY_NAME]


def format_scope(names: list[str] | tuple[str, ...] | frozenset[str]) -> str:
    """Canonical order (the registry's) so equal sets render to equal strings."""
    wanted = set(names)
    return " ".join(n for n in ALL_SCOPE_NAMES if n in wanted)
