"""POST /api/oauth/token: the token endpoint, RFC 6749 §3.2, with DPoP (RFC 9449 §5):
the proof comes in the `DPoP` header, and its nonce goes back in `DPoP-Nonce`. Also
served at `/token`, the origin's default path of the MCP 2025-03-26 fallback (listed in
no metadata: some agent clients refresh there before they have read it)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, post

from courseschool.common.answers import NO_STORE
from courseschool.common.web import proof_target

from ..endpoints.token import exchange_token
from .http import TokensDep, client_ip, form_params


@post(["/api/oauth/token", "/token"], status_code=200)
async def token(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
    dpop = proof_target(request, tokens.settings.base_url)
    form, authorization = await form_params(request), request.headers.get("authorization")
    response = await exchange_token(tokens, form, ip=client_ip(request), authorization=authorization, dpop=dpop)
    headers = {**NO_STORE, **await tokens.dpop.nonce_header(dpop)}
    return Response(msgspec.json.encode(response), media_type="application/json", headers=headers)
