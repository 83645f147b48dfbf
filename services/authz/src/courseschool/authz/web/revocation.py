"""POST /api/oauth/revoke: token revocation, RFC 7009 §2."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post

from courseschool.common.answers import NO_STORE

from ..endpoints.revocation import revoke_token
from .http import TokensDep, client_ip, form_params


@post("/api/oauth/revoke", status_code=200)
async def revoke(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
    """§2.2: 200 with an empty body, known token or not."""
    await revoke_token(
        tokens, await form_params(request), ip=client_ip(request), authorization=request.headers.get("authorization")
    )
    return Response(b"", headers=NO_STORE)
