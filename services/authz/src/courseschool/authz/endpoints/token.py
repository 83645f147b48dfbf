"""The token endpoint (RFC 6749 §3.2): a compose of named steps before the handler of
the `grant_type` (protocol/grants): the form parsed once, the rate limits (per address,
then per client named), client authentication with its registered method (§2.3), the
grant type supported and allowed for the client, the DPoP proof (RFC 9449 §5).
Revocation and introspection authenticate their client with the same first steps
(`authenticated`)."""

from __future__ import annotations

from courseschool.common.bearer import basic_credentials
from courseschool.common.db import held
from courseschool.common.dpop import ProofTarget
from courseschool.common.errors import InvalidRequestError, OAuthError, UnsupportedGrantTypeError, fit_description
from courseschool.common.metrics import TOKENS_ISSUED
from courseschool.common.secrets import digest

from ..families import Tokens
from ..protocol.authorization import Params
from ..protocol.grants import GRANT_HANDLERS
from ..protocol.models import Client, TokenResponse
from ..protocol.token_request import (
    TokenForm,
    authenticate_client,
    check_grant_type_allowed,
    parse_token_form,
    presented_credentials,
)
from ..protocol.tokens import require_proof_if_bound

# The rate limits a request counts against: (per address, per client).
TOKEN_RATES = ("rate_token_per_ip", "rate_token_per_client")


async def exchange_token(
    c: Tokens, form: Params, *, ip: str, authorization: str | None = None, dpop: ProofTarget | None = None
) -> TokenResponse:
    parsed, client = await authenticated(c, form, ip=ip, authorization=authorization)
    if not parsed.grant_type:
        raise InvalidRequestError("grant_type is required")
    handler = GRANT_HANDLERS.get(parsed.grant_type)
    if handler is None:
        raise UnsupportedGrantTypeError(f"grant_type {fit_description(parsed.grant_type)} is not supported")
    check_grant_type_allowed(client, parsed.grant_type)
    jkt = await proof_key(c, client, dpop)
    async with held(c.pool):  # the grant's statements (two to four) over one checkout
        response = await handler(parsed, client, c.token_context(ip=ip), jkt)
    TOKENS_ISSUED.labels(parsed.grant_type).inc()
    return response


async def proof_key(c: Tokens, client: Client, dpop: ProofTarget | None) -> str | None:
    """RFC 9449 §5: the thumbprint of the key of the request's DPoP proof, every check of
    §4.3 passed; None without a proof (refused for a client that must send one)."""
    proof = await c.dpop.check(dpop) if dpop is not None and dpop.proofs else None
    jkt = proof.jkt if proof is not None else None
    require_proof_if_bound(client, jkt)
    return jkt


async def authenticated(
    c: Tokens, form: Params, *, ip: str, authorization: str | None, rates: tuple[str, str] = TOKEN_RATES
) -> tuple[TokenForm, Client]:
    """The form parsed, then the rate limits (per address, then per named client, in one
    Redis call, before any secret is checked; a malformed form counts against its
    address), then client authentication (§2.3) with the method it registered."""
    per_ip, per_client_rate = rates
    try:
        parsed = parse_token_form(form)
        presented = presented_credentials(parsed, basic_credentials(authorization))
    except OAuthError:
        await c.limits.count(per_ip, ip)  # a malformed request counts against its address too
        raise
    await c.limits.count(per_ip, ip, (per_client_rate, digest(presented.client_id[:512]).hex()))
    return parsed, await authenticate_client(presented, c.directory.approved())
