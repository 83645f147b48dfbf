"""What the user is asked and what the grant holds.

The user's role caps the scopes they can grant; known scopes beyond the cap (or
beyond an integration's registered `scope`) are dropped, never refused, and the token
response's `scope` says what was granted (RFC 6749 §3.3).

A client's registered `scope` (RFC 7591 §2) is a ceiling only for the integrations an
administrator made. For a self-registered client (dynamic registration, a metadata
document) it is the default of a request without `scope` and nothing more: anyone can
register, so the registration vouches for nothing, and MCP clients register with the
scope they first chose and later ask for more after a 403 insufficient_scope (the
step-up). What such a client gets is bounded by the page the person approves, their
role and the school's rules.
OIDC Core §3.1.2.1: `prompt=login` and `max_age` force a fresh login.
"""

from __future__ import annotations

import msgspec

from courseschool.common.errors import InvalidGrantError
from courseschool.common.scopes import ROLE_CAPS, format_scope, parse_scope

from .authorization import AuthorizationRequest
from .models import Client, User


class Offer(msgspec.Struct, frozen=True, kw_only=True):
    """What a request may be granted now, and why the rest may not, each in the
    registry's order."""

    granted: list[str]
    beyond_registration: list[str]  # outside an integration's registered `scope` (its ceiling)
    beyond_role: list[str]  # within it, but outside what the person's role may grant


def registered_ceiling(client: Client) -> frozenset[str] | None:
    """The scopes a client may never be granted beyond: an integration's registered
    `scope`; None (no ceiling) for a self-registered client, whose `scope` is a default."""
    if not client.is_integration or client.scope is None:
        return None
    return frozenset(parse_scope(client.scope))


def offer(requested: list[str], *, role: str, client: Client) -> Offer:
    role_cap = ROLE_CAPS.get(role, frozenset())  # type: ignore[call-overload]
    registered = registered_ceiling(client)
    beyond_registration = [s for s in requested if registered is not None and s not in registered]
    beyond_role = [s for s in requested if s not in beyond_registration and s not in role_cap]
    granted = [s for s in requested if s not in beyond_registration and s not in beyond_role]
    return Offer(
        granted=parse_scope(format_scope(granted)),
        beyond_registration=parse_scope(format_scope(beyond_registration)),
        beyond_role=parse_scope(format_scope(beyond_role)),
    )


def grantable(requested: list[str], *, role: str, client: Client) -> tuple[list[str], list[str]]:
    """(granted, dropped), each in the registry's order."""
    now = offer(requested, role=role, client=client)
    return now.granted, parse_scope(format_scope(now.beyond_registration + now.beyond_role))


def approved_scope(shown: list[str] | None, grantable_now: list[str], kept: list[str] | None) -> list[str]:
    """What an approval grants: the scopes its consent page showed (`shown`, kept with
    the interaction when the page was rendered), less what the person unticked (`kept`
    is what stayed ticked, None for a form without choices), and of those only what is
    grantable at the moment of the decision. A registration widened (RFC 7592) or a role
    raised while the page was open can only narrow the grant, never widen it. No page
    shown, nothing granted."""
    if shown is None:
        return []
    chosen = set(shown) if kept is None else set(shown) & set(kept)
    return [s for s in grantable_now if s in chosen]


def capped_scope(scope: str, *, user: User, client: Client) -> str:
    """The scopes of a grant that the user's current role (and an integration's registered
    `scope`) still allow. The cap applies at every use of a grant, not only when it is
    made: after a demotion a refresh never yields a scope the new role does not allow,
    and the token response's `scope` says what was granted (RFC 6749 §3.3, §5.1)."""
    granted, _ = grantable(parse_scope(scope), role=user.role, client=client)
    if not granted:
        raise InvalidGrantError(
            "the user's role no longer allows any scope of this grant",
            detail=f"role {user.role} of user {user.id} allows none of {scope!r:.300} for client {client.client_id}",
        )
    return format_scope(granted)


def session_usable(request: AuthorizationRequest, *, auth_time: int | None, now: int) -> bool:
    """Whether an existing login may satisfy this request without asking again."""
    if auth_time is None or "login" in request.prompt or "select_account" in request.prompt:
        return False
    if request.max_age is None:
        return True
    # max_age=0 is prompt=login (OIDC Core §3.1.2.1), even within the same second.
    return request.max_age > 0 and now - auth_time <= request.max_age


def consent_can_be_remembered(client: Client) -> bool:
    """Only administrator-made integrations; public (loopback) clients always ask."""
    return client.is_integration and not client.is_public
