"""Token introspection, RFC 7662 §2: the client authenticates as at the token endpoint
(`token.authenticated`), counted against the introspection endpoint's own rate limits,
then the protocol handler answers."""

from __future__ import annotations

from typing import Any

from ..families import Tokens
from ..protocol import introspection
from ..protocol.authorization import Params
from .token import authenticated

# The rate limits an introspection counts against: (per address, per client).
INTROSPECTION_RATES = ("rate_introspect_per_ip", "rate_introspect_per_client")


async def introspect_token(c: Tokens, form: Params, *, ip: str, authorization: str | None = None) -> dict[str, Any]:
    parsed, client = await authenticated(c, form, ip=ip, authorization=authorization, rates=INTROSPECTION_RATES)
    return await introspection.introspect(parsed, client, c.token_context())
