"""Token revocation, RFC 7009 §2: the client authenticates as at the token endpoint
(`token.authenticated`: rate limits, then its registered method), then the protocol
handler revokes."""

from __future__ import annotations

from courseschool.common.db import held

from ..families import Tokens
from ..protocol import revocation
from ..protocol.authorization import Params
from .token import authenticated


async def revoke_token(c: Tokens, form: Params, *, ip: str, authorization: str | None = None) -> None:
    parsed, client = await authenticated(c, form, ip=ip, authorization=authorization)
    async with held(c.pool):  # the lookup and the revocation over one checkout
        await revocation.revoke(parsed, client, c.token_context())
