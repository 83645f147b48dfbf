"""What the user is asked and what the grant holds.

The user's role caps the scopes they can grant; known scopes beyond the cap (or
beyond a client's registered `scope`, RFC 7591 §2) are dropped, never refused, and
the token response's `scope` says what was granted (RFC 6749 §3.3).
OIDC Core §3.1.2.1: `prompt=login` and `max_age` force a fresh login.
"""

from __future__ import annotations

from courseschool.common.errors import InvalidGrantError
from courseschool.common.scopes import ROLE_CAPS, format_scope, parse_scope

from .authorize import AuthorizationRequest
from .models import Client, User


def grantable(requested: list[str], *, role: str, client: Client) -> tuple[list[str], list[str]]:
    """(granted, dropped), each in the registry's order."""
    cap = ROLE_CAPS.get(role, frozenset())  # type: ignore[call-overload]
    if client.scope is not None:
        cap = cap & frozenset(parse_scope(client.scope))
    granted = [s for s in requested if s in cap]
    dropped = [s for s in requested if s not in cap]
    return parse_scope(format_scope(granted)), parse_scope(format_scope(dropped))


def capped_scope(scope: str, *, user: User, client: Client) -> str:
    """The scopes of a grant that the user's current role (and the client's registered
    `scope`) still allow. The cap applies at every use of a grant, not only when it is
    made: after a demotion a refresh never yields a scope the new role does not allow,
    and the token response's `scope` says what was granted (RFC 6749 §3.3, §5.1)."""
    granted, _ = grantable(parse_scope(scope), role=user.role, client=client)
    if not granted:
        raise InvalidGrantError("the user's role no longer allows any scope of this grant")
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
