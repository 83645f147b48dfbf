"""When signing keys change, decided from their states alone (no I/O).

A key is born `next` and is published in the JWKS before it signs anything, so that
verifiers holding a cached JWKS already know it when the first token signed with it
arrives; it becomes `active` once it has been published for `lead` seconds and the
active key is `interval` old; the key it replaces is `retired`, still published until
every token it signed has expired (`retire_after`), then dropped from the JWKS.
"""

from __future__ import annotations

from enum import Enum

import msgspec


class KeyInfo(msgspec.Struct, frozen=True, kw_only=True):
    kid: str
    alg: str
    state: str  # "next" | "active" | "retired"
    created_at: int
    activated_at: int | None
    retired_at: int | None


class Action(Enum):
    CREATE_ACTIVE = "create_active"  # bootstrap: no key signs yet
    CREATE_NEXT = "create_next"
    PROMOTE_NEXT = "promote_next"


class RotationPolicy(msgspec.Struct, frozen=True, kw_only=True):
    interval: int  # how long a key is active
    lead: int  # how long a key is published before it signs
    retire_after: int  # how long a retired key stays published


def plan(keys: list[KeyInfo], alg: str, now: int, policy: RotationPolicy) -> Action | None:
    mine = [k for k in keys if k.alg == alg]
    active = next((k for k in mine if k.state == "active"), None)
    upcoming = next((k for k in mine if k.state == "next"), None)
    if active is None:
        return Action.PROMOTE_NEXT if upcoming is not None else Action.CREATE_ACTIVE
    age = now - (active.activated_at or active.created_at)
    if upcoming is None:
        return Action.CREATE_NEXT if age >= policy.interval - policy.lead else None
    if age >= policy.interval and now - upcoming.created_at >= policy.lead:
        return Action.PROMOTE_NEXT
    return None


def published(key: KeyInfo, now: int, policy: RotationPolicy) -> bool:
    if key.state in ("next", "active"):
        return True
    return key.retired_at is not None and now - key.retired_at < policy.retire_after
