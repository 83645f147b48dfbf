"""Dynamic client registration (RFC 7591 §3) and the client configuration endpoint
(RFC 7592 §2): the metadata is checked by `protocol.registration`; the client is stored
with hashes of its secret and of its registration access token."""

from __future__ import annotations

from typing import Any

from courseschool.common.bearer import bearer_token
from courseschool.common.errors import InvalidTokenError
from courseschool.common.logging import audit
from courseschool.common.secrets import digest, new_token, same

from ..families import Administration, ClientRemoval, Registration
from ..protocol import registration
from ..protocol.models import Client

CONFIGURATION_PATH = "/api/oauth/register"
# RFC 6750 §3 for the registration access token (RFC 7592 §2.1): no resource metadata.
_CHALLENGE = 'Bearer error="invalid_token"'


async def register_client(c: Registration, body: bytes, *, ip: str) -> dict[str, Any]:
    await c.limits.count("rate_register_per_ip", ip)
    meta = registration.parse_metadata(body)
    if meta.client_name is not None:
        registration.check_name_is_not_reserved(meta, await c.clients.integration_names())
    secret = new_token() if registration.is_confidential(meta.token_endpoint_auth_method) else None
    access_token = new_token()
    client = await c.clients.create(
        client_id=new_token(18),
        client_name=meta.client_name,
        redirect_uris=meta.redirect_uris or [],
        token_endpoint_auth_method=meta.token_endpoint_auth_method,
        grant_types=meta.grant_types,
        response_types=meta.response_types,
        application_type=meta.application_type,
        scope=meta.scope,
        id_token_signed_response_alg=meta.id_token_signed_response_alg,
        secret_hash=digest(secret) if secret else None,
        is_integration=False,
        now=c.clock.now(),
        dpop_bound_access_tokens=meta.dpop_bound_access_tokens,
        registration_token_hash=digest(access_token),
        links=(meta.client_uri, meta.policy_uri, meta.tos_uri),
    )
    audit(
        "client_registered",
        actor="client",
        client_id=client.client_id,
        auth_method=client.token_endpoint_auth_method,
        ip=ip,
    )
    return registration.registration_response(
        meta,
        client_id=client.client_id,
        issued_at=client.client_id_issued_at,
        secret=secret,
        configuration=(access_token, configuration_uri(c, client.client_id)),
    )


async def read_client(c: Registration, client_id: str, *, authorization: str | None, ip: str) -> dict[str, Any]:
    """RFC 7592 §2.1: the client's current metadata (its secret is stored as a hash only
    and never shown again)."""
    client, access_token = await _configuring(c, client_id, authorization, ip=ip)
    return _configuration(c, client, access_token)


async def update_client(
    c: Registration, client_id: str, body: bytes, *, authorization: str | None, ip: str
) -> dict[str, Any]:
    """RFC 7592 §2.2: the metadata replaced whole, checked as at registration."""
    current, access_token = await _configuring(c, client_id, authorization, ip=ip)
    update = registration.parse_update(body)
    registration.check_update(update, current)
    if update.client_name is not None:
        registration.check_name_is_not_reserved(update, await c.clients.integration_names())
    updated = await c.clients.update(client_id, update)
    if updated is None:  # removed between the check and the update
        raise _invalid_token("the client does not exist")
    audit("client_updated", actor="client", client_id=client_id)
    return _configuration(c, updated, access_token)


async def delete_client(c: Registration, client_id: str, *, authorization: str | None, ip: str) -> None:
    """RFC 7592 §2.3: the client is removed and every grant it holds ends (the resource
    servers hear of it at once); its id is then unknown everywhere."""
    await _configuring(c, client_id, authorization, ip=ip)
    ended = await remove_client(c, client_id, reason="client_deleted")
    audit("client_deleted", actor="client", client_id=client_id, grants_ended=ended)


async def remove_client(c: ClientRemoval, client_id: str, *, reason: str) -> int:
    """End every live grant of the client, then delete it; the number of grants ended."""
    grants = await c.admin_store.live_grants_of_client(client_id)
    for grant_id in grants:
        await c.revoker.revoke_grant(grant_id, reason=reason)
    await c.admin_store.delete_client(client_id)
    return len(grants)


async def remove_unused_clients(c: Administration) -> list[str]:
    """Registration hygiene: dynamically registered clients, and metadata-document
    clients a user approved, that never completed a grant, older than
    UNUSED_CLIENT_TTL (a disabled document client stays: it keeps its URL blocked)."""
    cutoff = c.clock.now() - c.settings.unused_client_ttl
    removed = await c.admin_store.delete_unused_clients(older_than=cutoff)
    if removed:
        audit("unused_clients_removed", actor="system", count=len(removed))
    return removed


def configuration_uri(c: Registration, client_id: str) -> str:
    return f"{c.settings.base_url}{CONFIGURATION_PATH}/{client_id}"


async def _configuring(c: Registration, client_id: str, authorization: str | None, *, ip: str) -> tuple[Client, str]:
    """The client and the registration access token it presented (RFC 7592 §2: as a
    Bearer token, RFC 6750). First the rate limits, per address and per client id named
    (one Redis call, before anything is read or written); an unknown client is a 401 too
    (§2.1), so nothing tells a guesser which ids exist."""
    await c.limits.count(
        "rate_client_configuration_per_ip",
        ip,
        ("rate_client_configuration_per_client", digest(client_id[:512]).hex()),
    )
    access_token = bearer_token(authorization)
    if access_token is None:
        raise _invalid_token("the registration access token is required (Authorization: Bearer)")
    expected = await c.clients.registration_token_hash(client_id)
    client = await c.clients.get(client_id) if expected is not None else None
    if client is None or expected is None or not same(digest(access_token), expected):
        raise _invalid_token("the registration access token is not valid for this client")
    return client, access_token


def _configuration(c: Registration, client: Client, access_token: str) -> dict[str, Any]:
    return registration.registration_response(
        client,
        client_id=client.client_id,
        issued_at=client.client_id_issued_at,
        secret=None,
        configuration=(access_token, configuration_uri(c, client.client_id)),
    )


def _invalid_token(description: str) -> InvalidTokenError:
    err = InvalidTokenError(description)
    err.headers["WWW-Authenticate"] = _CHALLENGE
    return err
