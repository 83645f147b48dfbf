"""The connected-apps page: every grant a signed-in person holds (one per approval),
and removing one or all of them. A removal revokes the grant at once, its refresh and
access tokens with it, feeds the revocation to the resource servers and forgets the
consent remembered for that app (`storage/revocations.py`). Every form is bound to the
login session (`page_forms`)."""

from __future__ import annotations

import msgspec

from courseschool.common.errors import NotFoundError
from courseschool.common.logging import audit

from ..components import Components
from ..protocol.client_names import ClientKind, client_kind
from ..protocol.models import User
from ..protocol.redirect_uris import describe_redirect_host
from ..storage.grants import HeldGrant
from . import page_forms

PURPOSE = "apps"  # the forms' CSRF purpose
REASON = "revoked_by_user"
NOT_YOURS = "There is no such access to remove: it may have been removed already."


class ConnectedApp(msgspec.Struct, frozen=True, kw_only=True):
    grant_id: str
    name: str
    kind: ClientKind
    verified_origin: str | None  # metadata_document: the host its document was fetched from
    redirect_host: str  # where its access is sent, in the consent page's words
    scope: list[str]
    approved_at: int
    last_used_at: int | None  # when a token was last issued for it; None: not yet
    created_from: str | None  # the address the approval came from; None: not recorded


def _app(held: HeldGrant) -> ConnectedApp:
    return ConnectedApp(
        grant_id=held.id,
        name=held.client_name or "An unnamed application",
        kind=client_kind(held),
        verified_origin=held.verified_origin,
        redirect_host=describe_redirect_host(held.redirect_uris[0]) if held.redirect_uris else "",
        scope=held.scope.split(),
        approved_at=held.created_at,
        last_used_at=held.last_used_at,
        created_from=held.created_from,
    )


async def signed_in_user(c: Components, session_id: str | None) -> User | None:
    """The person this browser's login session is for (None: not signed in)."""
    session = await c.sessions.get(session_id, now=c.clock.now())
    return await c.users.get(session.user_id) if session is not None else None


def form_token(c: Components, session_id: str) -> str:
    return page_forms.form_token(c, PURPOSE, session_id)


def check_form(c: Components, session_id: str, csrf: str) -> None:
    page_forms.check_form_token(c, PURPOSE, session_id, csrf)


async def connected_apps(c: Components, user: User) -> list[ConnectedApp]:
    """The grants that still hold access: revoked, expired and never-redeemed ones are left out."""
    s = c.settings
    held = await c.grants.held_by(
        user.id,
        now=c.clock.now(),
        refresh_idle_ttl=s.refresh_token_idle_ttl,
        refresh_absolute_ttl=s.refresh_token_absolute_ttl,
        access_token_ttl=s.access_token_ttl,
    )
    return [_app(h) for h in held]


async def remove(c: Components, user: User, grant_id: str) -> None:
    """Revoke one of the person's live grants; 404 for anything else (another person's
    grant says nothing more than a grant that does not exist)."""
    grant = await c.grants.get(grant_id)
    if grant is None or grant.user_id != user.id or grant.revoked:
        raise NotFoundError(NOT_YOURS)
    await c.revoker.revoke_grant(grant.id, reason=REASON)
    audit("grant_removed_by_user", actor="user", subject=user.id, client_id=grant.client_id, grant_id=grant.id)


async def remove_all(c: Components, user: User) -> int:
    """Revoke every grant the person holds, listed or not (an expired one too)."""
    grant_ids = list(await c.admin_store.live_grants_of_user(user.id))
    for grant_id in grant_ids:
        await c.revoker.revoke_grant(grant_id, reason=REASON)
    audit("grants_removed_by_user", actor="user", subject=user.id, count=len(grant_ids))
    return len(grant_ids)
