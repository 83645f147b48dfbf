"""Sign-out: the person ends their sign-in session, from our pages or at a client's
request (OpenID Connect RP-Initiated Logout 1.0, `end_session_endpoint`). Always asked
first (§2), with a form bound to the session, so no other site can sign anyone out."""

from __future__ import annotations

from courseschool.common.errors import InvalidRequestError, InvalidTokenError
from courseschool.common.logging import audit

from ..families import SignInPages
from ..protocol.authorization import Params, single
from ..protocol.logout import LogoutRequest, validate_logout_request
from ..protocol.redirects import redirect_url
from ..storage.sessions import LoginSession


async def logout_request(c: SignInPages, params: Params, *, ip: str) -> LogoutRequest:
    """The request checked (protocol/logout.py) against the stored clients only: a
    metadata document is never fetched here. TooManyRequestsError first, before anything
    is looked up (RATE_LOGOUT_PER_IP, like the authorization endpoint)."""
    await c.limits.count("rate_logout_per_ip", ip)
    hint_value = single(params, "id_token_hint", unsafe=True)
    hint = None
    if hint_value:
        try:
            hint = c.keys.ring.id_token_hint(hint_value[:8192])
        except InvalidTokenError:
            raise InvalidRequestError("the ID token hint was not issued by this server") from None
    return await validate_logout_request(params, c.clients, hint=hint)


async def current_session(c: SignInPages, session_id: str | None) -> LoginSession | None:
    return await c.sessions.get(session_id, now=c.clock.now())


async def sign_out(c: SignInPages, session_id: str | None) -> None:
    """End the session (nothing to do without one); the web layer checked first that
    the person confirmed it on our form."""
    session = await current_session(c, session_id)
    if session is None or session_id is None:
        return
    await c.sessions.end(session_id)
    audit("logout", actor="user", subject=session.user_id)


def after_sign_out(request: LogoutRequest) -> str | None:
    """Where the client asked the browser to go afterwards: its validated URI with its
    `state`. The web layer sends the browser there only after a confirmed sign-out;
    otherwise the signed-out page offers it as a link."""
    if request.post_logout_redirect_uri is None:
        return None
    return redirect_url(request.post_logout_redirect_uri, {"state": request.state})
