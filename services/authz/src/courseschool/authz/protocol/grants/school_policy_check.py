"""The school's app policy where tokens are issued (the code exchange, every refresh),
beside the block check (school_blocks.refuse_if_blocked): the rules are
protocol/school_policy.py's; a grant made before the school narrowed its policy gets
only what the policy allows now, or ends."""

from __future__ import annotations

from courseschool.common.errors import InvalidGrantError
from courseschool.common.scopes import format_scope, parse_scope

from ..context import TokenContext
from ..models import Client, Grant
from ..school_policy import NOT_APPROVED, REASON, school_allows


async def within_school_policy(grant: Grant, client: Client, scope: str, ctx: TokenContext) -> str:
    """Where tokens are issued (the code exchange, every refresh): the scope the school's
    policy still lets the grant's client have; a grant it lets have nothing ends here, and
    the request is refused (a grant made before the school narrowed its policy)."""
    standing = await ctx.policies.standing(grant.school_id, client.client_id)
    word = school_allows(standing, client, parse_scope(scope))
    if word.allowed:
        return format_scope(word.allowed)
    await ctx.revoker.revoke_grant(grant.id, reason=REASON, ip=ctx.ip)
    raise InvalidGrantError(
        NOT_APPROVED,
        detail=f"school {grant.school_id} ({standing.policy}) allows none of {scope!r:.200} to {client.client_id}",
    )
