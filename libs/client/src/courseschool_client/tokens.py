"""The client's calls to the authorization server: registration (RFC 7591), the token
endpoint (RFC 6749 §4.1.3 and §6), revocation (RFC 7009). Public client: `client_id` in
the form, no secret; a DPoP proof on each call when the sign-in has a key (RFC 9449 §5)."""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

from . import dpop
from .discovery import Server
from .errors import ClientError, TokenEndpointError
from .store import Record

log = logging.getLogger("courseschool_client")
REGISTERED_REDIRECT = "http://127.0.0.1/callback"  # any port at authorization time (RFC 8252 §7.3)


def register(http: httpx.Client, server: Server, client_name: str) -> tuple[str, str, str]:
    """Dynamic registration of a native public client; the server chooses the id."""
    if not server.registration_endpoint:
        raise ClientError(f"{server.issuer} offers no registration: pass the client id your school gave you")
    body = {
        "client_name": client_name,
        "application_type": "native",
        "redirect_uris": [REGISTERED_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }
    response = http.post(server.registration_endpoint, json=body)
    if response.status_code != 201:
        error, description = _error_of(response)
        raise ClientError(f"registration refused: {error}: {description}")
    registered = response.json()
    log.info("registered as a client of %s", server.issuer)
    uri, token = registered.get("registration_client_uri", ""), registered.get("registration_access_token", "")
    return str(registered["client_id"]), str(uri), str(token)


def still_registered(http: httpx.Client, record: Record) -> bool:
    """RFC 7592 §2.1: a client that was deleted (or pruned) reads 401 at its own URI."""
    if not (record.registration_uri and record.registration_token):
        return True  # nothing to ask with: assume it is
    response = http.get(record.registration_uri, headers={"Authorization": f"Bearer {record.registration_token}"})
    return response.status_code == 200


def _error_of(response: httpx.Response) -> tuple[str, str]:
    try:
        body = response.json()
        return str(body.get("error", f"HTTP {response.status_code}")), str(body.get("error_description", ""))
    except (ValueError, AttributeError):
        return f"HTTP {response.status_code}", ""


def token_request(http: httpx.Client, record: Record, form: dict[str, str]) -> dict[str, Any]:
    """POST to the token endpoint. A response lost on the way (a connection error) is asked
    for once more at once, with the same refresh token: the server answers an immediate
    retry with the same tokens (its retry window), where a late one would be a reuse."""
    form = {**form, "client_id": record.client_id}
    nonce: str | None = None
    for attempt in range(3):
        headers = {"Accept": "application/json"}
        if record.dpop_key:
            headers["DPoP"] = dpop.proof(record.dpop_key, "POST", record.token_endpoint, nonce=nonce)
        try:
            response = http.post(record.token_endpoint, data=form, headers=headers)
        except httpx.TransportError as exc:
            if attempt:
                raise ClientError(f"cannot reach {record.token_endpoint}: {exc}") from None
            log.warning("the token endpoint did not answer (%s): asking again at once", type(exc).__name__)
            continue
        if response.status_code == 200:
            return dict(response.json())
        error, description = _error_of(response)
        if error == "use_dpop_nonce" and nonce is None and response.headers.get("DPoP-Nonce"):
            nonce = response.headers["DPoP-Nonce"]  # RFC 9449 §8: once more, with the server's nonce
            continue
        raise TokenEndpointError(error, description)
    raise ClientError("the token endpoint kept asking again")


def apply(record: Record, answer: dict[str, Any]) -> None:
    """Take a token response into the record; the caller stores it before using the token."""
    record.access_token = str(answer["access_token"])
    record.token_type = str(answer.get("token_type", "Bearer"))
    record.expires_at = time.time() + float(answer.get("expires_in", 600))
    if answer.get("refresh_token"):
        record.refresh_token = str(answer["refresh_token"])
    if answer.get("scope"):
        record.scope = str(answer["scope"])


def revoke(http: httpx.Client, record: Record, token: str) -> None:
    """RFC 7009: revoking the refresh token ends the whole grant. 200 whether known or not."""
    if not record.revocation_endpoint or not token:
        return
    response = http.post(record.revocation_endpoint, data={"token": token, "client_id": record.client_id})
    if response.status_code != 200:
        error, description = _error_of(response)
        raise ClientError(f"revocation refused: {error}: {description}")
