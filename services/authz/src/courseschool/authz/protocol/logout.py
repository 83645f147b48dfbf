"""Sign-out started by a client: OpenID Connect RP-Initiated Logout 1.0.

§2: the request may carry `id_token_hint`, `client_id`, `post_logout_redirect_uri`,
`state` and `logout_hint`, by GET or a form POST; the OP should ask the person whether
to sign out. §3: `post_logout_redirect_uri` must have been registered for the client,
and without an `id_token_hint` the OP MUST NOT redirect unless it has other means of
confirming the target's legitimacy. The platform registers no separate list: the URI
must match one of the client's redirect URIs by the redirect rule (exact, the port of a
loopback URI may differ: RFC 8252 §7.3).

The rule here (docs/design.md, "Sign-out"): a redirect is planned only for a client
already stored (a metadata document is never fetched: the endpoint is anonymous), named
by an `id_token_hint` this server signed, with a URI registered for it; and it is made
only after the signed-in person confirmed on our page. A client that is not known gets
no redirect (and its name is not shown); a URI without the hint, or not registered for a
known client, is a page saying so. Nothing here ever redirects by itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from courseschool.common.errors import InvalidRequestError

from .authorization import MAX_CLIENT_ID, MAX_STATE, Params, single
from .client_names import ClientKind, client_kind
from .ports import ClientStore
from .redirect_uris import find_redirect_uri


class LogoutRequest(msgspec.Struct, frozen=True, kw_only=True):
    client_id: str | None = None
    client_name: str | None = None
    client_kind: ClientKind | None = None  # whose word the name is: the page says so
    id_token_hint: str | None = None  # carried through the confirmation form
    post_logout_redirect_uri: str | None = None  # set only when checked as above
    state: str | None = None


async def validate_logout_request(
    params: Params, clients: ClientStore, *, hint: Mapping[str, Any] | None
) -> LogoutRequest:
    """`clients`: the stored clients only (never a directory that fetches documents);
    `hint`: the claims of a verified `id_token_hint`, if one was sent."""
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
    if uri is not None and hint is None:
        raise InvalidRequestError(
            "post_logout_redirect_uri needs an id_token_hint: an ID token this server issued to the application"
        )
    client_id = client_id or hinted
    client = await clients.get(client_id) if client_id else None
    if client is None or client.disabled:
        return LogoutRequest(state=state)  # not known here: no name shown, no way back
    if uri is not None and not find_redirect_uri(uri, client.redirect_uris):
        raise InvalidRequestError("post_logout_redirect_uri is not registered for this application")
    return LogoutRequest(
        client_id=client.client_id,
        client_name=client.client_name,
        client_kind=client_kind(client),
        id_token_hint=single(params, "id_token_hint", unsafe=True) if uri is not None else None,
        post_logout_redirect_uri=uri,
        state=state,
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
