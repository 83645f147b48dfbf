"""The connected-apps page: every app a signed-in person has let in, and under it each
sign-in (one grant per approval whose code was exchanged: one per computer or browser);
ending one sign-in, removing an app everywhere, or removing every app. A removal revokes
the grants at once, their refresh and access tokens with them, feeds the revocation to
the resource servers and forgets the consent remembered for that app
(`storage/revocations.py`). The pages' forms are bound to the login session by the web
layer (`web/page_forms.py`)."""

from __future__ import annotations

from typing import Literal

import msgspec

from courseschool.common.activity import GrantActivity
from courseschool.common.errors import NotFoundError
from courseschool.common.logging import audit

from ..families import AccountPages
from ..protocol.client_names import ClientKind, client_kind
from ..protocol.models import User
from ..protocol.redirect_uris import describe_redirect_host
from ..storage.connected_apps import EndedBySchool, HeldGrant
from ..storage.notices import Notice
from .interaction import notices_for

REASON = "revoked_by_user"
NOT_YOURS = "There is no such access to remove: it may have been removed already."


class SignIn(msgspec.Struct, frozen=True, kw_only=True):
    """One grant: one approval, on one computer or browser."""

    grant_id: str
    scope: list[str]
    approved_at: int  # when this sign-in was first approved
    grew_at: int | None  # when the person last let it do more in the same sign-in (a step-up); None: never
    last_used_at: int | None  # when a token was last issued for it; None: not yet
    created_from: str | None  # the address the approval came from; None: not recorded
    created_agent: str | None  # the browser it came from, in a few words; None: not recorded


class ConnectedApp(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str
    name: str
    kind: ClientKind
    verified_origin: str | None  # metadata_document: the host its document was fetched from
    redirect_host: str  # where its access is sent, in the consent page's words
    sign_ins: list[SignIn]  # most recently used first


def _sign_in(held: HeldGrant) -> SignIn:
    return SignIn(
        grant_id=held.id,
        scope=held.scope.split(),
        approved_at=held.first_approved_at or held.created_at,
        grew_at=held.created_at if held.first_approved_at is not None else None,
        last_used_at=held.last_used_at,
        created_from=held.created_from,
        created_agent=held.created_agent,
    )


def _app(held: HeldGrant, sign_ins: list[SignIn]) -> ConnectedApp:
    return ConnectedApp(
        client_id=held.client_id,
        name=held.client_name or "An unnamed application",
        kind=client_kind(held),
        verified_origin=held.verified_origin,
        redirect_host=describe_redirect_host(held.redirect_uris[0]) if held.redirect_uris else "",
        sign_ins=sign_ins,
    )


def by_app(held: list[HeldGrant]) -> list[ConnectedApp]:
    """One entry per client, in the order of their first grant in `held`."""
    first: dict[str, HeldGrant] = {}
    sign_ins: dict[str, list[SignIn]] = {}
    for grant in held:
        first.setdefault(grant.client_id, grant)
        sign_ins.setdefault(grant.client_id, []).append(_sign_in(grant))
    return [_app(grant, sign_ins[client_id]) for client_id, grant in first.items()]


async def connected_apps(c: AccountPages, user: User) -> list[ConnectedApp]:
    """The apps with grants that still hold access, each with its sign-ins: revoked,
    expired and never-exchanged grants are left out."""
    s = c.settings
    held = await c.connected_apps.held_by(
        user.id,
        now=c.clock.now(),
        refresh_idle_ttl=s.refresh_token_idle_ttl,
        refresh_absolute_ttl=s.refresh_token_absolute_ttl,
        access_token_ttl=s.access_token_ttl,
    )
    return by_app(held)


async def ended_by_school(c: AccountPages, user: User, apps: list[ConnectedApp]) -> list[EndedBySchool]:
    """The apps whose access the person's school ended or blocked (within the retention
    of revoked grants), but for those the person holds again."""
    held = {app.client_id for app in apps}
    ended = await c.connected_apps.ended_by_school(
        user.id, now=c.clock.now(), retention=c.settings.revoked_grant_retention
    )
    return [e for e in ended if e.client_id not in held]


Ending = Literal["ended", "removed"]  # what the list confirms: one sign-in ended, an app removed


class AppsPage(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the connected-apps page shows, read in one use case."""

    apps: list[ConnectedApp]
    ended_by_school: list[EndedBySchool]
    activity: dict[str, GrantActivity] | None  # by grant id; None: the resource API did not answer
    notices: list[Notice]  # new connections to tell of, once
    confirmed: tuple[Ending, ConnectedApp] | None  # the ending the list confirms, named from the record


async def apps_page(
    c: AccountPages, user: User, session_id: str, *, confirm: tuple[Ending, str] | None = None
) -> AppsPage:
    """The page after `confirm` (what ended, and the grant id the address names): it is
    confirmed only for the person's own grant that has ended, so a link cannot make the
    page say anything."""
    apps = await connected_apps(c, user)
    gone = await ended(c, user, confirm[1]) if confirm is not None else None
    return AppsPage(
        apps=apps,
        ended_by_school=await ended_by_school(c, user, apps),
        activity=await activity_of(c, user, [one.grant_id for app in apps for one in app.sign_ins]),
        notices=await notices_for(c, user.id, session_id),
        confirmed=(confirm[0], gone) if confirm is not None and gone is not None else None,
    )


async def activity_of(c: AccountPages, user: User, grant_ids: list[str]) -> dict[str, GrantActivity] | None:
    """What the resource API recorded of these grants of the person's school (absent: did
    nothing); None when it did not answer, which the pages say beside everything else."""
    return await c.activity.of_grants(grant_ids, school_id=user.school_id) if grant_ids else {}


async def live_sign_in(c: AccountPages, user: User, grant_id: str) -> ConnectedApp:
    """One live sign-in of the person, as its app with that sign-in alone (the
    confirmation page); 404 for anything else."""
    found = await c.connected_apps.one_of_user(grant_id, user.id)
    if found is None or found[1]:
        raise NotFoundError(NOT_YOURS)
    return by_app([found[0]])[0]


async def app_of(c: AccountPages, user: User, grant_id: str) -> ConnectedApp:
    """The app one of the person's live sign-ins belongs to, with every sign-in listed
    for it (the confirmation of removing it everywhere); 404 for anything else."""
    one = await live_sign_in(c, user, grant_id)
    listed = next((app for app in await connected_apps(c, user) if app.client_id == one.client_id), None)
    return listed or one


async def ended(c: AccountPages, user: User, grant_id: str) -> ConnectedApp | None:
    """One of the person's sign-ins that has ended, for the notice naming it; None for
    anything else (a live one, another person's, an unknown id)."""
    found = await c.connected_apps.one_of_user(grant_id, user.id)
    return by_app([found[0]])[0] if found is not None and found[1] else None


async def end_sign_in(c: AccountPages, user: User, grant_id: str) -> None:
    """End one of the person's sign-ins (revoke its grant); 404 for anything else
    (another person's grant says nothing more than a grant that does not exist)."""
    grant = await c.grants.get(grant_id)
    if grant is None or grant.user_id != user.id or grant.revoked:
        raise NotFoundError(NOT_YOURS)
    await c.revoker.revoke_grant(grant.id, reason=REASON)
    audit("grant_removed_by_user", actor="user", subject=user.id, client_id=grant.client_id, grant_id=grant.id)


async def remove_app(c: AccountPages, user: User, grant_id: str) -> int:
    """End every live sign-in of the app one of the person's live grants belongs to
    (listed or not); 404 for anything else. How many ended."""
    grant = await c.grants.get(grant_id)
    if grant is None or grant.user_id != user.id or grant.revoked:
        raise NotFoundError(NOT_YOURS)
    grant_ids = await c.connected_apps.live_of_user_and_client(user.id, grant.client_id)
    for each in grant_ids:
        await c.revoker.revoke_grant(each, reason=REASON)
    audit("app_removed_by_user", actor="user", subject=user.id, client_id=grant.client_id, count=len(grant_ids))
    return len(grant_ids)


async def remove_all(c: AccountPages, user: User) -> int:
    """Revoke every grant the person holds, listed or not (an expired one too)."""
    grant_ids = list(await c.admin_store.live_grants_of_user(user.id))
    for grant_id in grant_ids:
        await c.revoker.revoke_grant(grant_id, reason=REASON)
    audit("grants_removed_by_user", actor="user", subject=user.id, count=len(grant_ids))
    return len(grant_ids)
