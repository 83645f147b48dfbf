"""The UserInfo response, OIDC Core §5.3.2: `sub`, plus the standard claims the
granted scopes ask for (§5.4: `profile` gives the name claims, `email` gives
`email` and `email_verified`). Claims of other scopes are never released here."""

from __future__ import annotations

from typing import Any

from .models import User


def released_claims(user: User, scopes: set[str] | frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"sub": user.id}
    if "profile" in scopes:
        out["name"] = user.name
        out["preferred_username"] = user.preferred_username
    if "email" in scopes:
        out["email"] = user.email
        out["email_verified"] = user.email_verified
    return out
