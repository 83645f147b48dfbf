"""What a school's owners and admins decide about which apps its people may connect
(issue 39), on the school's apps page: the school's policy (`protocol/school_policy.py`;
set by owners only: an admin sees it and may not change it), the apps it approved, and
people's requests for approval.

- An approval is for everyone at the school, optionally up to chosen scopes, and covers
  one client id: a metadata-document app by its URL, an integration by its id, a
  self-registered app by its own registration only (`covers`, which the page says).
  Approving an app settles every pending request of it the approval covers, and each
  person is told by e-mail (storage/access_requests.py).
- A request is approved (the approval its steward chose) or declined, with an optional
  note; either way its person is told.
- An owner's decisions are the owner's: an admin may neither change nor withdraw an
  approval an owner made. A blocked app cannot be approved until it is unblocked.

Every action is an event naming who (and in which role) did what, from where."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import ForbiddenError, InvalidRequestError, NotFoundError
from courseschool.common.logging import audit
from courseschool.common.scopes import BY_NAME, format_scope, parse_scope

from ..families import AccountPages
from ..protocol.client_names import ClientKind, client_kind
from ..protocol.models import Client, User
from ..protocol.school_blocks import lookup_keys
from ..protocol.school_policy import POLICIES, Policy
from ..storage.access_requests import AccessRequest
from ..storage.school_policy import Approval
from .school_apps import OWNERS_DECISION

NO_REQUEST = "There is no such pending request at your school: it may have been decided or have expired."
NOTE_LIMIT = 500
OWNER_APPROVED = "An owner of the school approved this app: only an owner may change it."


class AppRules(msgspec.Struct, frozen=True, kw_only=True):
    """The school's policy, the apps it approved and the pending requests, for its page."""

    policy: Policy
    approvals: list[Approval]
    requests: list[AccessRequest]


class ApprovalSubject(msgspec.Struct, frozen=True, kw_only=True):
    """The app an approval would cover, as the confirmation names it."""

    client_id: str
    name: str
    kind: ClientKind
    verified_origin: str | None
    approved_scope: str | None  # what an earlier approval covers (None: none, or every area)
    approved: bool


def covers(kind: ClientKind) -> str:
    """What an approval of an app of this kind covers, in the page's words."""
    if kind == "integration":
        return "this integration, by its id"
    if kind == "metadata_document":
        return "the app at this address (its document's URL), and no other"
    return "this one registration only: another app that registers with the same name is not approved"


async def app_rules(c: AccountPages, user: User) -> AppRules:
    return AppRules(
        policy=await c.school_apps.policy(user.school_id),
        approvals=await c.school_apps.approvals(user.school_id),
        requests=await c.access_requests.pending(user.school_id, now=c.clock.now()),
    )


async def set_policy(c: AccountPages, user: User, policy: str, *, ip: str) -> None:
    """Set the school's app policy: owners only (an admin gets 403; anyone else never
    passed the pages' guard)."""
    if user.role != "owner":
        raise ForbiddenError(
            detail="only an owner may set the school's app policy",
            advice="Only an owner of the school may change which apps people here may connect.",
        )
    if policy not in POLICIES:
        raise InvalidRequestError("choose one of the policies the page offers", advice="Go back and choose one.")
    before = await c.school_apps.set_policy(user.school_id, policy, by=user.id, now=c.clock.now())
    audit(
        "school_app_policy_changed", actor="user", subject=user.id, role=user.role, policy=policy, before=before, ip=ip
    )


async def approval_subject(c: AccountPages, user: User, client_id: str) -> tuple[ApprovalSubject, Client]:
    client = await c.directory.get(client_id) if client_id else None
    if client is None:
        raise NotFoundError(advice="There is no such app.")
    earlier = next((a for a in await c.school_apps.approvals(user.school_id) if a.client_id == client_id), None)
    subject = ApprovalSubject(
        client_id=client.client_id,
        name=client.client_name or "An unnamed application",
        kind=client_kind(client),
        verified_origin=client.verified_origin,
        approved_scope=earlier.scope if earlier else None,
        approved=earlier is not None,
    )
    return subject, client


def chosen_scope(cover: str, scopes: list[str]) -> str | None:
    """`cover` "all": every area (None); "chosen": the scopes ticked, each one we know."""
    if cover == "all":
        return None
    names = parse_scope(" ".join(scopes))
    if cover != "chosen" or not names or any(n not in BY_NAME for n in names):
        raise InvalidRequestError(
            "choose every area, or tick at least one area", advice="Go back and choose what the approval covers."
        )
    return format_scope(names)


async def approve(
    c: AccountPages,
    user: User,
    client_id: str,
    scope: str | None,
    *,
    ip: str,
    request_id: str | None = None,
    note: str | None = None,
) -> int:
    """Approve the app for everyone at the school (up to `scope`; None: every area), and
    settle the pending requests it covers (`request_id`'s whatever its areas); how many."""
    subject, client = await approval_subject(c, user, client_id)
    if request_id is not None and not await c.access_requests.pending(
        user.school_id, now=c.clock.now(), request_id=request_id
    ):
        raise NotFoundError(advice=NO_REQUEST)
    if await c.school_apps.blocked(user.school_id, lookup_keys(client)) is not None:
        raise InvalidRequestError("the app is blocked at the school", advice="Unblock the app before approving it.")
    await _refuse_an_owners_approval(c, user, client_id)
    now = c.clock.now()
    if not await c.school_apps.approve(
        user.school_id, client_id, client_name=client.client_name, scope=scope, by=user.id, role=user.role, now=now
    ):
        raise ForbiddenError(detail=OWNERS_DECISION, advice=OWNER_APPROVED)  # an owner approved it meanwhile
    kept = _note(note)
    decided = []
    if request_id is not None:
        decided += await c.access_requests.decide(
            user.school_id,
            request_id=request_id,
            client_id=client_id,
            decision="approved",
            by=user.id,
            note=kept,
            now=now,
        )
    decided += await c.access_requests.decide(
        user.school_id,
        request_id=None,
        client_id=client_id,
        decision="approved",
        by=user.id,
        note=kept,
        now=now,
        covers=scope,
    )
    audit(
        "app_approved",
        actor="user",
        subject=user.id,
        role=user.role,
        client_id=client_id,
        kind=subject.kind,
        scope=scope or "every area",
        requests=len(decided),
        ip=ip,
    )
    return len(decided)


async def decline(c: AccountPages, user: User, request_id: str, note: str | None, *, ip: str) -> None:
    decided = await c.access_requests.decide(
        user.school_id,
        request_id=request_id,
        client_id=None,
        decision="declined",
        by=user.id,
        note=_note(note),
        now=c.clock.now(),
    )
    if not decided:
        raise NotFoundError(advice=NO_REQUEST)
    audit(
        "app_access_declined",
        actor="user",
        subject=user.id,
        role=user.role,
        client_id=decided[0].client_id,
        person=decided[0].user_id,
        ip=ip,
    )


async def withdraw(c: AccountPages, user: User, client_id: str, *, ip: str) -> None:
    """Withdraw the school's approval of an app: its people's grants then hold only what
    the policy allows unapproved apps, from their next use."""
    await _refuse_an_owners_approval(c, user, client_id)
    if not await c.school_apps.withdraw(user.school_id, client_id, role=user.role):
        await _refuse_an_owners_approval(c, user, client_id)  # an owner approved it meanwhile
        raise NotFoundError(advice="This app is not approved at your school.")
    audit("app_approval_withdrawn", actor="user", subject=user.id, role=user.role, client_id=client_id, ip=ip)


async def pending_request(c: AccountPages, user: User, request_id: str) -> AccessRequest:
    found = await c.access_requests.pending(user.school_id, now=c.clock.now(), request_id=request_id)
    if not found:
        raise NotFoundError(advice=NO_REQUEST)
    return found[0]


async def _refuse_an_owners_approval(c: AccountPages, user: User, client_id: str) -> None:
    if user.role == "owner":
        return
    earlier = next((a for a in await c.school_apps.approvals(user.school_id) if a.client_id == client_id), None)
    if earlier is not None and earlier.approved_by_role == "owner":
        raise ForbiddenError(detail=OWNERS_DECISION, advice=OWNER_APPROVED)


def _note(note: str | None) -> str | None:
    kept = " ".join((note or "").split())[:NOTE_LIMIT]
    return kept or None
