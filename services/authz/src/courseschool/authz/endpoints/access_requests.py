"""The school's word on the consent page (issue 39): what its app policy lets the app
have now (`protocol/school_policy.py`), what needs the school's approval, and a person's
request for it. A person stopped by the policy asks with a short reason; the school's
owners and admins are e-mailed and see it on the school's apps page
(`endpoints/app_approvals.py`); meanwhile the app gets `access_denied` saying the
school's approval is pending."""

from __future__ import annotations

import unicodedata

import msgspec

from courseschool.common.errors import ForbiddenError, InvalidRequestError
from courseschool.common.logging import audit
from courseschool.common.scopes import format_scope

from ..families import SignInPages
from ..protocol.consent import offer
from ..protocol.models import Client, User
from ..protocol.school_blocks import lookup_keys
from ..protocol.school_policy import NOT_APPROVED, PENDING, Policy, school_allows
from ..storage.interactions import Interaction
from .interaction_session import sign_in_lives

REASON_LIMIT = 500


class SchoolView(msgspec.Struct, frozen=True, kw_only=True):
    """What the person's school lets the app have of what their role could grant."""

    policy: Policy
    allowed: list[str]
    needs_approval: list[str]  # withheld until the school approves the app for them
    asked_at: int | None  # when this person asked for it, while the request is pending

    @property
    def stopped(self) -> bool:
        """The school lets the app have nothing: no grant at all."""
        return not self.allowed and bool(self.needs_approval)

    @property
    def refusal(self) -> str | None:
        """What the app is told when the school lets it have nothing."""
        if not self.stopped:
            return None
        return PENDING if self.asked_at is not None else NOT_APPROVED


async def school_view(c: SignInPages, user: User, client: Client, grantable: list[str]) -> SchoolView:
    standing = await c.school_apps.standing(user.school_id, client.client_id)
    word = school_allows(standing, client, grantable)
    asked = None
    if word.needs_approval:
        asked = await c.access_requests.pending_since(user.school_id, user.id, client.client_id, now=c.clock.now())
    return SchoolView(policy=standing.policy, allowed=word.allowed, needs_approval=word.needs_approval, asked_at=asked)


def cleaned_reason(text: str) -> str:
    """A reason as kept: controls and invisible format characters out, white space
    collapsed, at most REASON_LIMIT characters."""
    kept = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text)
    kept = "".join(ch for ch in kept if unicodedata.category(ch) != "Cf")
    return " ".join(kept.split())[:REASON_LIMIT]


async def ask(c: SignInPages, interaction: Interaction, reason: str, *, ip: str) -> bool:
    """The signed-in person asks their school to approve the interaction's app for what
    the policy withholds (within their role); False when they asked already. Each request
    e-mails every owner and admin: a person may ask RATE_ACCESS_REQUEST_PER_PERSON times
    (429 beyond it), whatever the apps."""
    client = await c.directory.get(interaction.request.client_id)
    user = await c.users.get(interaction.user_id) if interaction.user_id else None
    if client is None or client.disabled or user is None or user.disabled or not await sign_in_lives(c, interaction):
        raise InvalidRequestError(
            "the client, the user or the sign-in is no longer valid", advice="Go back to the app and start again."
        )
    if await c.school_apps.blocked(user.school_id, lookup_keys(client)) is not None:
        raise ForbiddenError(
            detail="the school blocked the app asked for",
            advice="Your school blocked this app: it cannot be approved while the block holds.",
        )
    view = await school_view(c, user, client, offer(interaction.request.scope, role=user.role, client=client).granted)
    if not view.needs_approval:
        raise InvalidRequestError(
            "nothing this app asks for needs the school's approval", advice="Go back and choose Allow or Deny."
        )
    said = cleaned_reason(reason)
    if not said:
        raise InvalidRequestError("say why you need the app", advice="Go back and say in a few words why you need it.")
    await c.limits.count("rate_access_request_per_person", user.id)
    made = await c.access_requests.ask(
        school_id=user.school_id,
        user_id=user.id,
        client_id=client.client_id,
        client_name=client.client_name,
        verified_origin=client.verified_origin,
        scope=format_scope(view.needs_approval),
        reason=said,
        now=c.clock.now(),
    )
    if made:
        audit(
            "app_access_requested",
            actor="user",
            subject=user.id,
            client_id=client.client_id,
            scope=format_scope(view.needs_approval),
            ip=ip,
        )
    return made
