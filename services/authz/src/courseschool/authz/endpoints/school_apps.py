"""The school's apps page (`/oauth/school/apps`), for a school's owners and admins:
every app anyone at the school connected, who approved it (name, role), what it may
do, when it was last used and what it did; and three actions, each confirmed and bound
to the session: end one person's access to an app, end everyone's at the school, and
block the app for the school (no one there may approve it again; its grants there end;
its consent page says the school blocked it). A block covers the software, not one
registration (`protocol/school_blocks.py`). An owner's decisions are the owner's: an
admin may not end an owner's access, nor lift a block an owner made, nor block an app an owner holds access to or
approved. Lecturers and
students get a 404 that says the page is for the school's owners and admins (`steward`,
the guard of the pages' routers, web/school_apps.stewards_only: the use cases here and
in app_approvals.py are given a steward). Every
action is an event naming who (and in which role) did what, from where (`app_blocked`
a security one)."""

from __future__ import annotations

import uuid

import msgspec

from courseschool.common.audit_events import AuditEvent
from courseschool.common.errors import ForbiddenError, NotFoundError
from courseschool.common.logging import audit

from ..families import AccountPages
from ..protocol.client_names import ClientKind, client_kind
from ..protocol.models import User
from ..protocol.school_blocks import REASON as BLOCK_REASON
from ..protocol.school_blocks import keys_to_block, lookup_keys
from ..storage.school_apps import BlockedApp, SchoolGrant

REASON = "revoked_by_school"
STEWARDS = frozenset({"owner", "admin"})
STEWARDS_ONLY = (
    "This page is for your school's owners and admins: it lists the apps everyone at the school connected. "
    "Your own apps are on the page Your apps (/oauth/apps)."
)
OWNERS_DECISION = "an owner of the school decided this; only an owner may change it"
NO_ACCESS = "There is no such access at your school: it may have ended already."


class Approver(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    name: str
    email: str
    role: str
    scope: list[str]  # what their sign-ins hold together
    grant_ids: list[str]  # their sign-ins of the app
    sign_ins: int
    approved_at: int  # the first of their sign-ins
    last_used_at: int | None


class SchoolApp(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    name: str
    kind: ClientKind
    verified_origin: str | None
    people: list[Approver]  # most recently used first
    last_used_at: int | None


def steward(user: User | None) -> User:
    """The signed-in person, if they look after their school's apps; 404 otherwise."""
    if user is None or user.role not in STEWARDS or user.disabled:
        raise NotFoundError(advice=STEWARDS_ONLY)
    return user


def _by_app(grants: list[SchoolGrant]) -> list[SchoolApp]:
    apps: dict[str, list[SchoolGrant]] = {}
    for grant in grants:
        apps.setdefault(grant.client_id, []).append(grant)
    return [_app(held) for held in apps.values()]


def _app(held: list[SchoolGrant]) -> SchoolApp:
    first = held[0]
    people: dict[str, list[SchoolGrant]] = {}
    for grant in held:
        people.setdefault(grant.user_id, []).append(grant)
    approvers = [
        Approver(
            user_id=user_id,
            name=grants[0].user_name,
            email=grants[0].user_email,
            role=grants[0].user_role,
            scope=sorted({s for g in grants for s in g.scope.split()}),
            grant_ids=[g.grant_id for g in grants],
            sign_ins=len(grants),
            approved_at=min(g.approved_at for g in grants),
            last_used_at=max((g.last_used_at for g in grants if g.last_used_at is not None), default=None),
        )
        for user_id, grants in people.items()
    ]
    return SchoolApp(
        client_id=first.client_id,
        name=first.client_name or "An unnamed application",
        kind=client_kind(first),
        verified_origin=first.verified_origin,
        people=approvers,
        last_used_at=approvers[0].last_used_at,
    )


async def school_apps(c: AccountPages, user: User) -> tuple[list[SchoolApp], list[BlockedApp]]:
    """The apps people at the steward's school hold live access for, and the blocked ones."""
    grants = await c.school_apps.live_grants(user.school_id)
    return _by_app(grants), await c.school_apps.blocked_apps(user.school_id)


async def app_at_school(c: AccountPages, user: User, client_id: str) -> SchoolApp:
    """One app as the page lists it (a confirmation names it); 404 when no one at the
    school holds access for it."""
    apps, _ = await school_apps(c, user)
    found = next((app for app in apps if app.client_id == client_id), None)
    if found is None:
        raise NotFoundError(advice=NO_ACCESS)
    return found


async def end_access(c: AccountPages, user: User, client_id: str, person: str | None, *, ip: str) -> int:
    """End one person's access to the app (`person`: their id), or everyone's at the
    school; 404 when there is none. An admin may not end an owner's access: asked to
    end everyone's, an admin ends everyone's but the owners'. How many sign-ins ended."""
    held = await c.school_apps.live_grant_ids(user.school_id, client_id, _person(person))
    if not held:
        raise NotFoundError(advice=NO_ACCESS)
    if user.role != "owner" and person is not None and any(role == "owner" for _, role in held):
        _refused("school_access_end_refused", user, client_id, ip=ip, person=person)
        raise ForbiddenError(detail=OWNERS_DECISION, advice="Only an owner of the school may end an owner's access.")
    grant_ids = [grant_id for grant_id, role in held if user.role == "owner" or role != "owner"]
    for grant_id in grant_ids:
        await c.revoker.revoke_grant(grant_id, reason=REASON, ip=ip)
    await c.mail.school_acted(grant_ids, blocked=False, by=user.id, now=c.clock.now())
    audit(
        "school_access_ended",
        actor="user",
        subject=user.id,
        role=user.role,
        client_id=client_id,
        person=person,
        count=len(grant_ids),
        owners_kept=len(held) - len(grant_ids),
        ip=ip,
    )
    return len(grant_ids)


async def block(c: AccountPages, user: User, client_id: str, *, ip: str) -> int:
    """Block the app for the steward's school, the software and not only this
    registration (`keys_to_block`), and end every grant there the block covers; how many
    ended. The block is written before the grants are read, under the school's lock:
    an approval in flight either made its grant before (ended here) or sees the block.
    An admin may not block what an owner decided: an app an owner holds access to (the
    block would end it) or approved (403, a security event)."""
    client = await c.directory.get(client_id) if client_id else None
    if client is None:
        raise NotFoundError(advice="There is no such app.")
    keys = keys_to_block(client)
    if user.role != "owner" and await _owners_decision(c, user.school_id, {key for _, key in keys}):
        _refused("app_block_refused", user, client_id, ip=ip)
        raise ForbiddenError(
            detail=OWNERS_DECISION,
            advice="An owner of the school uses or approved this app: only an owner may block it.",
        )
    unrevoked = await c.school_apps.block(
        user.school_id,
        client_id,
        client_name=client.client_name,
        keys=list(keys),
        by=user.id,
        by_role=user.role,
        now=c.clock.now(),
    )
    blocked = {key for _, key in keys}
    grant_ids = [g.grant_id for g in unrevoked if blocked.intersection(lookup_keys(g))]
    for grant_id in grant_ids:
        await c.revoker.revoke_grant(grant_id, reason=BLOCK_REASON, ip=ip)
    await c.mail.school_acted(grant_ids, blocked=True, by=user.id, now=c.clock.now())
    audit(
        "app_blocked",
        actor="user",
        subject=user.id,
        role=user.role,
        client_id=client_id,
        covers=[kind for kind, _ in keys],
        grants_ended=len(grant_ids),
        ip=ip,
    )
    return len(grant_ids)


async def unblock(c: AccountPages, user: User, client_id: str, *, ip: str) -> None:
    """Lift the school's block of the app; an owner's block only by an owner."""
    roles = await c.school_apps.blocked_by(user.school_id, client_id)
    if not roles:
        raise NotFoundError(advice="This app is not blocked at your school.")
    if "owner" in roles and user.role != "owner":
        _refused("app_unblock_refused", user, client_id, ip=ip)
        raise ForbiddenError(
            detail=OWNERS_DECISION, advice="An owner of the school blocked this app: only an owner may unblock it."
        )
    await c.school_apps.unblock(user.school_id, client_id)
    audit("app_unblocked", actor="user", subject=user.id, role=user.role, client_id=client_id, ip=ip)


async def _owners_decision(c: AccountPages, school_id: str, blocked: set[str]) -> bool:
    """An owner of the school holds access the block would end, or approved an app it
    would cover: this one, or another of the same name or origin (`lookup_keys`)."""
    if any(blocked.intersection(lookup_keys(g)) for g in await c.school_apps.owners_unrevoked(school_id)):
        return True
    for approval in await c.school_apps.approvals(school_id):
        if approval.approved_by_role != "owner":
            continue
        approved = await c.directory.get(approval.client_id) or approval  # gone: as it was approved
        if blocked.intersection(lookup_keys(approved)):
            return True
    return False


def _refused(event: AuditEvent, user: User, client_id: str, *, ip: str, **fields: object) -> None:
    """An admin's attempt to undo an owner's decision, refused: on record (a security
    event), naming who tried what."""
    audit(
        event,
        actor="user",
        subject=user.id,
        role=user.role,
        client_id=client_id,
        reason="owners_decision",
        ip=ip,
        **fields,
    )


def _person(person: str | None) -> str | None:
    """A person's id from a form (None: everyone); a malformed one names no access: 404."""
    if person is None:
        return None
    try:
        return str(uuid.UUID(person))
    except ValueError:
        raise NotFoundError(advice=NO_ACCESS) from None
