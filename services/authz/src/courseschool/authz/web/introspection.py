"""POST /api/oauth/introspect: token introspection, RFC 7662 §2."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post

from ..endpoints.introspection import introspect_token
from .http import TokensDep, client_ip, form_params, no_store_json


@post("/api/oauth/introspect", status_code=200)
async def introspect(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
    return no_store_json(
        await introspect_token(
            tokens,
            await form_params(request),
            ip=client_ip(request),
            authorization=request.headers.get("authorization"),
        )
    )
