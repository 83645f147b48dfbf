"""Which apps a school's people may connect (issue 39): the school's policy, set by its
owners, and the apps it approved.

- `anyone`: anyone at the school may connect any app (the default of a new school);
- `read_only`: an app the school has not approved may read, but gets no `:write` scope
  (the consent page shows those areas as needing the school's approval);
- `approved_only`: an app the school has not approved gets no grant at all.

An approval covers one client id, never a name (`storage/school_policy.py`): a
metadata-document client by its URL, an integration by its id, a self-registered client
by its own registration only, since anyone can register another with the same name. It
may be limited to chosen scopes. Integrations an administrator made are approved by
construction. The identity scopes (`openid`, `profile`, `email`) are the person's own and
go with any app the school lets in. A role's cap applies first, inside an approval
(`consent.offer`).

Like a block (`school_blocks.py`), the policy is checked where a grant is made (the
consent page and its decision) and where tokens are issued (the code exchange, every
refresh): a grant made before the policy changed gets no scope the policy now withholds,
and a grant it withholds everything from ends.
"""

from __future__ import annotations

from typing import Literal, Protocol

import msgspec

from courseschool.common.scopes import IDENTITY_SCOPES

from .models import Client

Policy = Literal["anyone", "read_only", "approved_only"]
POLICIES: tuple[Policy, ...] = ("anyone", "read_only", "approved_only")
NOT_APPROVED = "the user's school has not approved this client"  # access_denied / invalid_grant description
PENDING = "the user's school has not approved this client yet: the user's request for approval is pending"
REASON = "school_policy"  # a grant the school's policy ended at its next use
_IDENTITY = frozenset(s.name for s in IDENTITY_SCOPES)


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    """A school's word on one client: its policy, and its approval of the client if any."""

    policy: Policy = "anyone"
    approved: bool = False
    approved_scope: frozenset[str] | None = None  # None: every scope (when approved)


class PolicyStore(Protocol):
    async def standing(self, school_id: str, client_id: str) -> Standing: ...


class SchoolWord(msgspec.Struct, frozen=True, kw_only=True):
    """What the school lets a client have of some scopes, and what needs its approval."""

    allowed: list[str]
    needs_approval: list[str]


def school_allows(standing: Standing, client: Client, scopes: list[str]) -> SchoolWord:
    """Split `scopes` (already within the person's role) into what the school's policy
    lets `client` have and what needs the school's approval first."""
    if client.is_integration or standing.policy == "anyone":
        return SchoolWord(allowed=list(scopes), needs_approval=[])
    if standing.policy == "approved_only" and not standing.approved:
        return SchoolWord(allowed=[], needs_approval=[s for s in scopes if s not in _IDENTITY])

    def allowed(scope: str) -> bool:
        if scope in _IDENTITY:
            return True
        if standing.approved and (standing.approved_scope is None or scope in standing.approved_scope):
            return True
        return standing.policy == "read_only" and not scope.endswith(":write")

    return SchoolWord(allowed=[s for s in scopes if allowed(s)], needs_approval=[s for s in scopes if not allowed(s)])


def only_identity(scopes: list[str]) -> bool:
    """Whether a grant of these scopes would hold nothing of the school's (who the person
    is only): under `approved_only`, an unapproved app gets even that from nowhere."""
    return all(s in _IDENTITY for s in scopes)
