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
    """A resource area of the course-school API, the accesses its scopes grant, and what
    they let an app do, in the words a person approving access reads."""

    name: str  # scope prefix, e.g. "membership_plans"
    label: str  # human words, e.g. "membership plans"
    accesses: tuple[Access, ...]
    sees: str = ""  # what :read lets an app see
    changes: str = ""  # what :write lets an app do
    about_people: bool = False  # holds personal data of students, members, customers or the user


@dataclass(frozen=True, slots=True)
class Scope:
    name: str
    description: str
    area: str | None = None
    access: Access | None = None


# The resource areas, in the interface document's order. The resource API declares
# each area's routes and model over these objects (resource_api/areas/registry.py).
COURSES = Area(
    "courses",
    "courses",
    ("read", "write"),
    sees="courses, including drafts and prices",
    changes="add, edit and delete courses",
)
STUDENTS = Area(
    "students",
    "students",
    ("read", "write"),
    sees="students, their email addresses and enrolments",
    changes="add, edit and remove students and enrolments",
    about_people=True,
)
MEMBERS = Area(
    "members",
    "members",
    ("read", "write"),
    sees="community members, their email addresses and plans",
    changes="add, edit and remove members",
    about_people=True,
)
ANALYTICS = Area("analytics", "analytics", ("read",), sees="figures about the school: students, revenue, enrolments")
CURRICULUM = Area(
    "curriculum",
    "curriculum",
    ("read", "write"),
    sees="the sections and lessons of every course",
    changes="change the sections and lessons of courses",
)
ORDERS = Area(
    "orders", "orders", ("read",), sees="orders, with customers' email addresses and amounts", about_people=True
)
SCHOOL = Area(
    "school",
    "school",
    ("read", "write"),
    sees="the school's settings",
    changes="change the school's name, contact and settings",
)
APPEARANCE = Area(
    "appearance",
    "appearance",
    ("read", "write"),
    sees="how the school's site looks",
    changes="change the look of the school's site",
)
EVENTS = Area(
    "events",
    "events",
    ("read", "write"),
    sees="events, including unpublished ones",
    changes="add, edit and delete events",
)
MEMBERSHIP_PLANS = Area(
    "membership_plans",
    "membership plans",
    ("read", "write"),
    sees="membership plans and their prices",
    changes="add, edit and delete plans and prices",
)
COUPONS = Area(
    "coupons", "coupons", ("read", "write"), sees="discount coupons", changes="create, edit and delete discount coupons"
)
POSTS = Area(
    "posts", "posts", ("read", "write"), sees="blog posts, including drafts", changes="write, edit and delete posts"
)
SUBSCRIPTIONS = Area(
    "subscriptions",
    "subscriptions",
    ("read", "write"),
    sees="members' subscriptions",
    changes="change and cancel members' subscriptions",
    about_people=True,
)
DIGITAL_PRODUCTS = Area(
    "digital_products",
    "digital products",
    ("read", "write"),
    sees="digital products and their prices",
    changes="add, edit and delete digital products",
)
COMMENTS = Area(
    "comments", "comments", ("read",), sees="comments on courses and posts, with their authors", about_people=True
)
LECTURERS = Area(
    "lecturers",
    "lecturers",
    ("read", "write"),
    sees="lecturers' profiles and email addresses",
    changes="add, edit and remove lecturers",
    about_people=True,
)
STORAGE = Area("storage", "storage", ("write",), changes="upload files to the school's storage")
FORMS = Area("forms", "forms", ("read",), sees="forms and how many people answered them")
PAGES = Area(
    "pages",
    "pages",
    ("read", "write"),
    sees="the pages of the school's site, including drafts",
    changes="add, edit and delete pages",
)
ACCOUNT = Area(
    "account",
    "account",
    ("read", "write"),
    sees="your own account settings",
    changes="change your own account settings",
    about_people=True,
)

AREAS: tuple[Area, ...] = (
    COURSES,
    STUDENTS,
    MEMBERS,
    ANALYTICS,
    CURRICULUM,
    ORDERS,
    SCHOOL,
    APPEARANCE,
    EVENTS,
    MEMBERSHIP_PLANS,
    COUPONS,
    POSTS,
    SUBSCRIPTIONS,
    DIGITAL_PRODUCTS,
    COMMENTS,
    LECTURERS,
    STORAGE,
    FORMS,
    PAGES,
    ACCOUNT,
)


IDENTITY_SCOPES: tuple[Scope, ...] = (
    Scope("openid", "Sign you in with your course-school account (OpenID Connect)"),
    Scope("profile", "See your name and username"),
    Scope("email", "See your email address"),
)


def _area_scopes() -> tuple[Scope, ...]:
    # A write scope does not include reading: reads always need the :read scope.
    out = []
    for area in AREAS:
        for access in area.accesses:
            what = f"see {area.sees}" if access == "read" else area.changes
            description = f"{access.capitalize()} access to {area.label}: {what}"
            out.append(Scope(f"{area.name}:{access}", description, area.name, access))
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
            identity | {s.name for s in SCOPES if s.access == "read"} | {f"{a}:write" for a in _LECTURER_WRITES}
        )
    return frozenset(identity | {"account:read", "account:write"})


ROLE_CAPS: dict[Role, frozenset[str]] = {role: _role_cap(role) for role in ROLES}

# RFC 9728 §2 `scopes_supported` of the protected resource: what a client asks for when
# nothing else tells it (MCP clients request this list when no challenge names a scope),
# so the minimal set for basic use: sign-in, name, e-mail and reading every area. Writes
# are asked for when needed, through the 403 `insufficient_scope` challenge (step-up);
# the authorization server's own metadata (RFC 8414) lists every scope.
BASIC_SCOPES: tuple[str, ...] = tuple(s.name for s in SCOPES if s.access != "write")

# RFC 6749 §3.3: what an authorization request without `scope` asks for, when the client
# registered no `scope` of its own: sign-in, the user's name, and reading every area. The
# role cap then drops the areas the user may not read, as for any request.
DEFAULT_SCOPE: tuple[str, ...] = ("openid", "profile", *(s.name for s in SCOPES if s.access == "read"))


def writes_lost(old_role: str, new_role: str) -> frozenset[str]:
    """The write scopes a change of role takes away (empty for a promotion)."""
    lost = ROLE_CAPS.get(old_role, frozenset()) - ROLE_CAPS.get(new_role, frozenset())  # type: ignore[call-overload]
    return frozenset(s for s in lost if BY_NAME[s].access == "write")


def parse_scope(value: str) -> list[str]:
    """Split a `scope` parameter (RFC 6749 §3.3) into its distinct names, in order."""
    seen: dict[str, None] = {}
    for name in value.split(" "):
        if name:
            seen.setdefault(name, None)
    return list(seen)


# Scopes a request may name that this server does not offer and ignores (RFC 6749 §3.3:
# the server may fully or partially ignore the scope requested). OpenID Connect clients
# add `offline_access` by habit (OIDC Core §11); refresh tokens go to every client
# registered for the `refresh_token` grant, so it asks for nothing more here.
IGNORED_SCOPES = frozenset({"offline_access"})


def requested_scope(value: str) -> list[str]:
    """A `scope` parameter as a request asks it: its distinct names, in order, less those
    this server ignores (`IGNORED_SCOPES`). Empty when it named only those."""
    return [name for name in parse_scope(value) if name not in IGNORED_SCOPES]


def unknown_scopes(names: list[str]) -> list[str]:
    return [n for n in names if n not in BY_NAME]


def format_scope(names: list[str] | tuple[str, ...] | frozenset[str]) -> str:
    """Canonical order (the registry's) so equal sets render to equal strings."""
    wanted = set(names)
    return " ".join(n for n in ALL_SCOPE_NAMES if n in wanted)
