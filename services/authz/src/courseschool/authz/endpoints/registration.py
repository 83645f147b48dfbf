"""Dynamic client registration, RFC 7591 §3: the metadata is checked by
`protocol.registration`; the client is stored with a hash of its secret."""

from __future__ import annotations

from typing import Any

from courseschool.common.logging import audit
from courseschool.common.secrets import digest, new_token

from ..components import Components
from ..protocol import registration


async def register_client(c: Components, body: bytes, *, ip: str) -> dict[str, Any]:
    await c.limits.count("rate_register_per_ip", ip)
    meta = registration.parse_metadata(body)
    if meta.client_name is not None:
        registration.check_name_is_not_an_integrations(meta, await c.clients.integration_names())
    secret = new_token() if meta.token_endpoint_auth_method == "client_secret_post" else None
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
    )
    audit(
        "client_registered", actor="client", client_id=client.client_id, auth_method=client.token_endpoint_auth_method
    )
    return registration.registration_response(
        meta, client_id=client.client_id, issued_at=client.client_id_issued_at, secret=secret
    )
