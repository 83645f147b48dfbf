"""Sign-out started by a client: OpenID Connect RP-Initiated Logout 1.0.

§2: the request may carry `id_token_hint`, `client_id`, `post_logout_redirect_uri`,
`state` and `logout_hint`, by GET or a form POST; the OP should ask the person whether
to sign out. §3: the browser is sent to `post_logout_redirect_uri` (with `state`) only
when that URI was registered for the client. The platform registers no separate list:
the URI must match one of the client's redirect URIs by the redirect rule (exact, the
port of a loopback URI may differ: RFC 8252 §7.3). Without a client known from
`client_id` or the hint, or with a URI that does not match, there is no redirect at
all: every error here is a page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from courseschool.common.errors import InvalidRequestError

from .authorize import MAX_CLIENT_ID, MAX_STATE, Params, single
from .ports import ClientStore
from .redirect_uris import find_redirect_uri


class LogoutRequest(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str | None = None
    client_name: str | None = None
    post_logout_redirect_uri: str | None = None
    state: str | None = None


async def validate_logout_request(
    params: Params, clients: ClientStore, *, hint: Mapping[str, Any] | None
) -> LogoutRequest:
    """`hint`: the claims of a verified `id_token_hint`, if one was sent."""
    client_id = single(params, "client_id", unsafe=True)
    uri = single(params, "post_logout_redirect_uri", unsafe=True)
    state = single(params, "state", unsafe=True)
    if client_id is not None and len(client_id) > MAX_CLIENT_ID:
        raise InvalidRequestError("client_id is too long")
    if state is not None and len(state) > MAX_STATE:
        raise InvalidRequestError(f"state must be at most {MAX_STATE} characters")
    hinted = _client_of(hint) if hint is not None else None
    if hinted is not None and client_id is not None and hinted != client_id:
        raise InvalidRequestError("client_id is not the client the ID token hint was issued to")
    client_id = client_id or hinted
    if client_id is None:
        if uri is not None:
            raise InvalidRequestError("post_logout_redirect_uri needs client_id or id_token_hint")
        return LogoutRequest(state=state)
    client = await clients.get(client_id)
    if client is None or client.disabled:
        raise InvalidRequestError("the application that sent you here is not known to this server")
    if uri is not None and not find_redirect_uri(uri, client.redirect_uris):
        raise InvalidRequestError("post_logout_redirect_uri is not registered for this application")
    return LogoutRequest(
        client_id=client.client_id, client_name=client.client_name, post_logout_redirect_uri=uri, state=state
    )


def _client_of(claims: Mapping[str, Any]) -> str | None:
    """OIDC Core §2: `azp` names the client when present, else the single `aud`."""
    azp = claims.get("azp")
    if isinstance(azp, str):
        return azp
    aud = claims.get("aud")
    if isinstance(aud, list):
        aud = aud[0] if len(aud) == 1 else None
    return aud if isinstance(aud, str) else None
