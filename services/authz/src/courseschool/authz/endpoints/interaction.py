"""The interaction between authorization and code: the person signs in, then
approves or denies. The pages post back here; the flow resumes at the end with a
redirect to the client (RFC 6749 §4.1.2, §4.1.2.1)."""

from __future__ import annotations

import datetime as dt
from typing import Literal
from urllib.parse import urlsplit

import msgspec

from courseschool.common.errors import AccessDeniedError, InvalidRequestError
from courseschool.common.logging import audit
from courseschool.common.scopes import format_scope
from courseschool.common.secrets import digest, same

from ..families import SignInPages, Visitors
from ..protocol.authorization import AuthorizationRequest
from ..protocol.client_names import ClientKind, client_kind
from ..protocol.consent import approved_scope, consent_can_be_remembered, offer
from ..protocol.models import Client, User
from ..protocol.redirect_uris import describe_redirect_host
from ..protocol.redirects import error_redirect_url
from ..protocol.school_blocks import BLOCKED, lookup_keys
from ..storage.interactions import Interaction
from ..storage.notices import Notice
from ..storage.school_apps import BlockedAtSchool
from ..storage.second_step import SecondStep
from .access_requests import SchoolView, school_view
from .account import school_name
from .authorization import issue_code
from .interaction_session import forget_ended_sign_in, sign_in_lives
from .signin import (
    LOGIN_FAILED,
    SignedIn,
    sign_in,
)

EXPIRED = "the interaction has expired, was completed, or belongs to another browser"
EXPIRED_ADVICE = (
    "This sign-in page has expired, was already used, or was opened in another browser. Go back to the app and "
    "start again: it opens a new one."
)


class SelfDeclaredLink(msgspec.Struct, frozen=True, kw_only=True):
    label: str  # "website", "privacy policy", "terms of service"
    url: str
    host: str  # shown beside the label: where the link really goes


_LINK_LABELS = (("client_uri", "website"), ("policy_uri", "privacy policy"), ("tos_uri", "terms of service"))


def self_declared_links(client: Client) -> list[SelfDeclaredLink]:
    links = []
    for field, label in _LINK_LABELS:
        url = getattr(client, field)
        if url:
            links.append(SelfDeclaredLink(label=label, url=url, host=urlsplit(url).hostname or ""))
    return links


class ConsentView(msgspec.Struct, frozen=True, kw_only=True):
    client_name: str
    client_kind: ClientKind  # who vouches for the name: only an integration's is the school's
    redirect_host: str
    verified_origin: str | None
    links: list[SelfDeclaredLink]  # pages the app says describe it (RFC 7591 §2), its own claim
    registered_on: str  # when the app registered (or was first seen), as a date
    new_app: bool  # this person has never approved it before
    elsewhere: bool  # it holds access from another computer or browser: this sign-in gets its own
    user: User
    school_name: str  # the school the access would be to, by its name
    new: list[str]  # the scopes the person is asked for now
    already: list[str]  # asked for again, allowed before in this browser sign-in (a step-up shows the difference)
    beyond_registration: list[str]  # asked for, outside the app's registered scope: not granted
    beyond_role: list[str]  # asked for, beyond the person's role: not granted
    blocked: bool  # the person's school blocked this app: nothing may be allowed
    blocked_as: str | None = None  # the name of the app the school blocked, when this one reads as it
    school: SchoolView | None = None  # what the school's app policy lets the app have, and the person's request
    notices: list[Notice] = []  # new connections to tell the person of, once


async def open_interaction(c: SignInPages, uid: str, binding: str | None, session: str | None = None) -> Interaction:
    """The pending interaction, if this browser holds its binding cookie. `session`: the
    browser's session cookie, if it sent one."""
    interaction = await c.interactions.get(uid)
    if interaction is None or not binding or not same(digest(binding), interaction.browser_hash):
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    # Its sign-in ended, or the browser's is another now: back to the sign-in form.
    await forget_ended_sign_in(c, interaction, session)
    return interaction


async def client_name(c: SignInPages, interaction: Interaction) -> str:
    client = await c.directory.get(interaction.request.client_id)
    return client.client_name if client and client.client_name else "An application"


class ClientLabel(msgspec.Struct, frozen=True, kw_only=True):
    """How the sign-in page names the app: whose word the name is, as on the consent page."""

    name: str
    kind: ClientKind  # only an integration's name is the school's word
    verified_origin: str | None


async def client_label(c: SignInPages, interaction: Interaction) -> ClientLabel:
    client = await c.directory.get(interaction.request.client_id)
    if client is None:  # removed since the request was checked: a name of nobody's
        return ClientLabel(name="An application", kind="self_registered", verified_origin=None)
    return ClientLabel(
        name=client.client_name or "An unnamed application",
        kind=client_kind(client),
        verified_origin=client.verified_origin,
    )


async def login(
    c: SignInPages, interaction: Interaction, email: str, password: str, *, ip: str, agent: str | None
) -> str | None:
    """Sign in (`sign_in`) for the interaction: on success bind the user to it and
    return the new session's id for the cookie; when a second step is due, keep it in
    the interaction (the page asks for it next); on failure record a message for the page."""
    outcome = await sign_in(c, email, password, ip=ip, agent=agent, client_id=interaction.request.client_id)
    interaction.second_step = None
    if outcome is None:
        interaction.login_error = LOGIN_FAILED
        interaction.login_email = email[:320]  # the form keeps what the person typed
    elif isinstance(outcome, SecondStep):
        interaction.second_step, interaction.login_error = outcome, None
    else:
        interaction.bind(user_id=outcome.user_id, auth_time=outcome.auth_time, session_id=outcome.session_id)
    await c.interactions.save(interaction)
    return outcome.session_id if isinstance(outcome, SignedIn) else None


async def consent_view(c: SignInPages, interaction: Interaction, session_id: str | None) -> ConsentView:
    """What the consent page shows. `session_id`: the browser sign-in it is shown in; what
    was allowed before in it stays allowed (a step-up), what was allowed in other
    computers or browsers is theirs, so this page asks for all it grants."""
    client = await c.directory.get(interaction.request.client_id)
    user = await c.users.get(interaction.user_id) if interaction.user_id else None
    if client is None or user is None or not await sign_in_lives(c, interaction):
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    now = offer(interaction.request.scope, role=user.role, client=client)
    block = await c.school_apps.blocked(user.school_id, lookup_keys(client))
    blocked = block is not None
    school = await school_view(c, user, client, now.granted)
    granted = [] if blocked else school.allowed
    interaction.shown = granted  # the decision grants at most what this page shows
    await c.interactions.save(interaction)
    before = await c.grants.allowed_before(user_id=user.id, client_id=client.client_id, session_id=session_id)
    allowed = set(before.here)
    if consent_can_be_remembered(client):
        allowed |= set((await c.consents.scope(user.id, client.client_id) or "").split())
    issued = dt.datetime.fromtimestamp(client.client_id_issued_at, dt.UTC)
    return ConsentView(
        client_name=client.client_name or "An unnamed application",
        client_kind=client_kind(client),
        redirect_host=describe_redirect_host(interaction.request.redirect_uri),
        verified_origin=client.verified_origin,
        links=self_declared_links(client),
        registered_on=f"{issued.day} {issued:%B %Y}",
        new_app=not before.seen,
        elsewhere=before.elsewhere,
        user=user,
        school_name=await school_name(c, user),
        new=[s for s in granted if s not in allowed],
        already=[s for s in granted if s in allowed],
        beyond_registration=now.beyond_registration,
        beyond_role=now.beyond_role,
        blocked=blocked,
        blocked_as=block.client_name if block is not None and block.client_id != client.client_id else None,
        school=school,
        notices=await notices_for(c, user.id, session_id),
    )


class Decided(msgspec.Struct, frozen=True, kw_only=True):
    location: str  # where the browser goes: the client's redirect URI with a code or an error
    outcome: Literal["approved", "denied", "blocked", "not_approved"]  # "blocked", "not_approved": the school's word


NOT_SHOWN = "the consent page of this interaction was never shown"


async def decide(
    c: SignInPages,
    uid: str,
    *,
    approve: bool,
    ip: str,
    kept: list[str] | None = None,
    session_id: str | None = None,
    agent: str | None = None,
) -> Decided:
    """Finish the interaction (once); return where to send the browser and what was
    decided (the school's block, when one covers the app, whatever was posted). `ip` and
    `agent`: the address and browser the approval came from, recorded with the grant.
    `kept`: the scopes the person left ticked (None: the form offered no choice). The
    approval grants at most what the consent page showed (`approved_scope`)."""
    pending = await c.interactions.get(uid)
    if pending is not None and pending.shown is None and approve:
        raise InvalidRequestError(
            NOT_SHOWN, advice="Open the page that asks you to allow access, then choose Allow or Deny there."
        )
    interaction = await c.interactions.take(uid)
    if interaction is None:
        raise InvalidRequestError("the interaction was completed or has expired", advice=EXPIRED_ADVICE)
    request = interaction.request
    client = await c.directory.get(request.client_id)
    user = await c.users.get(interaction.user_id) if interaction.user_id else None
    live = await sign_in_lives(c, interaction, session_id)  # the sign-in it was made in: not ended, not replaced
    if client is None or client.disabled or user is None or user.disabled or interaction.auth_time is None or not live:
        raise InvalidRequestError(
            "the client, the user or the sign-in is no longer valid",
            advice="The app, your account or your sign-in changed meanwhile. Go back to the app and start again.",
        )
    issuer = c.settings.issuer
    refused = await _refused_by_school(c, user, client, request, ip=ip)
    if refused is not None:
        return refused
    school = await school_view(c, user, client, offer(request.scope, role=user.role, client=client).granted)
    if school.refusal is not None:  # the school's policy lets the app have nothing: its word, not the person's
        audit("consent_not_approved", actor="user", subject=user.id, client_id=client.client_id, ip=ip)
        return _refused(school.refusal, request, issuer, "not_approved")
    if not approve:
        audit("consent_denied", actor="user", subject=user.id, client_id=client.client_id, ip=ip)
        return _refused("the user denied the request", request, issuer, "denied")
    granted = approved_scope(interaction.shown, school.allowed, kept)
    if not granted:
        return _refused("nothing the user allowed may be granted", request, issuer, "denied")
    allowed = (await c.grants.allowed_before(user_id=user.id, client_id=client.client_id, session_id=session_id)).here
    added = [s for s in granted if s not in allowed]
    if allowed and added:  # the person lets an app that holds access in this sign-in do more
        audit("step_up", actor="user", subject=user.id, client_id=client.client_id, added=format_scope(added), ip=ip)
    if consent_can_be_remembered(client):
        await c.consents.remember(user.id, client.client_id, format_scope(granted))
    try:
        location = await issue_code(
            c, client, user, request, interaction.auth_time, granted, ip=ip, agent=agent, session_id=session_id
        )
    except BlockedAtSchool:  # blocked while the person decided: the block won, nothing was made
        audit("consent_blocked", actor="user", subject=user.id, client_id=client.client_id, ip=ip)
        return _refused(BLOCKED, request, issuer, "blocked")
    return Decided(location=location, outcome="approved")


async def _refused_by_school(
    c: SignInPages, user: User, client: Client, request: AuthorizationRequest, *, ip: str
) -> Decided | None:
    """The school's block, when one covers the app, whatever was posted: the school's
    decision, not the person's, and said so to both and in the record."""
    block = await c.school_apps.blocked(user.school_id, lookup_keys(client))
    if block is None:
        return None
    audit(
        "consent_blocked",
        actor="user",
        subject=user.id,
        client_id=client.client_id,
        blocked_client_id=block.client_id,
        covered_by=block.kind,
        ip=ip,
    )
    return _refused(BLOCKED, request, c.settings.issuer, "blocked")


def _refused(
    description: str,
    request: AuthorizationRequest,
    issuer: str,
    outcome: Literal["denied", "blocked", "not_approved"],
) -> Decided:
    """`access_denied` back to the client (RFC 6749 §4.1.2.1, with `state` and `iss`)."""
    denied = AccessDeniedError(description)
    return Decided(location=error_redirect_url(denied, request.redirect_uri, request.state, issuer), outcome=outcome)


async def notices_for(c: Visitors, user_id: str, session_id: str | None) -> list[Notice]:
    """The new connections to tell this person of on the page they open now (once)."""
    return await c.notices.take(user_id=user_id, session_id=session_id, now=c.clock.now())


async def switch_user(c: SignInPages, interaction: Interaction, session_id: str | None) -> None:
    """ "Not you?": the signed-in person signs out here and the interaction goes back to
    the sign-in form, so someone else can sign in and decide."""
    if session_id:
        await c.sessions.end(session_id)
    if interaction.user_id is not None:
        audit("logout", actor="user", subject=interaction.user_id, client_id=interaction.request.client_id)
    interaction.unbind()
    await c.interactions.save(interaction)
