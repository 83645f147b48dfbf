"""The authorization endpoint, RFC 6749 §4.1.1: validate the request, then either
open an interaction for the login and consent pages, or, when an integration's
remembered consent covers the request, issue the code at once (§4.1.2)."""

from __future__ import annotations

from courseschool.common.errors import (
    ConsentRequiredError,
    InvalidRequestError,
    LoginRequiredError,
    OAuthError,
)
from courseschool.common.logging import audit
from courseschool.common.scopes import format_scope
from courseschool.common.secrets import new_token

from ..families import SignInPages
from ..protocol.authorization import (
    AuthorizationError,
    AuthorizationRequest,
    Params,
    UnsafeRequestError,
    validate_authorization_request,
)
from ..protocol.client_id_metadata import UNUSABLE, is_metadata_url
from ..protocol.consent import consent_can_be_remembered, grantable, session_usable
from ..protocol.models import Client, User
from ..protocol.redirects import code_redirect_url
from ..protocol.school_blocks import lookup_keys
from ..storage.interactions import Interaction
from ..storage.school_apps import BlockedAtSchool


async def start_authorization(
    c: SignInPages, params: Params, session_id: str | None, *, ip: str, agent: str | None = None
) -> tuple[Interaction, str] | str:
    """The new interaction and its browser-binding value, or the URL to send the
    browser to. Raises UnsafeRequestError (a page) or AuthorizationError (a redirect);
    TooManyRequestsError first, before anything is fetched or stored."""
    await c.limits.count("rate_authorize_per_ip", ip)
    client_ids = params.get("client_id") or []
    if c.fetcher is not None and len(client_ids) == 1 and is_metadata_url(client_ids[0]):
        _, refusal = await c.directory.resolve(client_ids[0])
        if refusal is not None:
            raise UnsafeRequestError(UNUSABLE, detail=str(refusal), advice=refusal.advice)
    client, request = await validate_authorization_request(
        params, c.directory, known_resources=c.known_resources, default_resource=c.default_resource
    )
    now = c.clock.now()
    session = await c.sessions.get(session_id, now=now)
    usable = session is not None and session_usable(request, auth_time=session.auth_time, now=now)
    if session is not None and usable and "consent" not in request.prompt:
        location = await _remembered(
            c, client, request, session.user_id, session.auth_time, ip=ip, agent=agent, session_id=session_id
        )
        if location is not None:
            return location
    if "none" in request.prompt:
        # OIDC Core §3.1.2.6: no page may be shown.
        err: OAuthError = (
            ConsentRequiredError("the user must approve this client")
            if usable
            else LoginRequiredError("the user is not signed in")
        )
        raise AuthorizationError(err, request.redirect_uri, request.state)
    signed_in = (
        (session.user_id, session.auth_time, session_id) if session is not None and usable and session_id else None
    )
    return await c.interactions.create(request, signed_in=signed_in)


async def _remembered(
    c: SignInPages,
    client: Client,
    request: AuthorizationRequest,
    user_id: str,
    auth_time: int,
    *,
    ip: str,
    agent: str | None,
    session_id: str | None,
) -> str | None:
    """Only administrator-made integrations may skip the consent page."""
    if not consent_can_be_remembered(client):
        return None
    user = await c.users.get(user_id)
    remembered = await c.consents.scope(user_id, client.client_id)
    if user is None or user.disabled or remembered is None:
        return None
    if await c.school_apps.blocked(user.school_id, lookup_keys(client)):
        return None  # the consent page says why
    granted, _ = grantable(request.scope, role=user.role, client=client)
    if not granted or not set(granted) <= set(remembered.split()):
        return None
    audit("consent_remembered", actor="user", subject=user_id, client_id=client.client_id)
    try:
        return await issue_code(c, client, user, request, auth_time, granted, ip=ip, agent=agent, session_id=session_id)
    except BlockedAtSchool:
        return None  # blocked meanwhile: the consent page says why


async def issue_code(
    c: SignInPages,
    client: Client,
    user: User,
    request: AuthorizationRequest,
    auth_time: int,
    granted: list[str],
    *,
    ip: str,
    agent: str | None = None,
    session_id: str | None = None,
) -> str:
    """Record the grant and its code (stored as a hash), and the address and browser the
    approval came from (`ip`; `agent`, the short form of its User-Agent: for the user's
    connected-apps page); the URL back to the client.
    A metadata document's client is recorded first: the grant refers to it. The person
    is told of the connection on their next page in another session (`session_id`:
    the sign-in session the approval was made in). `BlockedAtSchool`, and nothing made,
    when a block of the person's school covers the client (checked with the grant, under
    the school's block lock, so a block made meanwhile wins)."""
    if client.verified_origin is not None:
        recorded = await c.directory.record(client)
        if recorded is None or recorded.disabled:
            raise InvalidRequestError("this sign-in request is no longer valid")
    code = new_token()
    now = c.clock.now()
    grant = await c.grants.create_with_code(
        client_id=client.client_id,
        user_id=user.id,
        school_id=user.school_id,
        scope=format_scope(granted),
        resource=request.resource,
        auth_time=auth_time,
        code=code,
        redirect_uri=request.redirect_uri,
        code_challenge=request.code_challenge,
        nonce=request.nonce,
        code_expires_at=now + c.settings.code_ttl,
        now=now,
        created_from=ip,
        created_agent=agent,
        dpop_jkt=request.dpop_jkt,
        session_id=session_id,
        block_keys=lookup_keys(client),
    )
    await c.notices.add(user_id=user.id, grant_id=grant.id, now=now, session_id=session_id)
    audit("consent_given", actor="user", subject=user.id, client_id=client.client_id, grant_id=grant.id, ip=ip)
    return code_redirect_url(request.redirect_uri, code=code, state=request.state, issuer=c.settings.issuer)
