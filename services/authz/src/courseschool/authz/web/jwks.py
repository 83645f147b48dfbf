"""GET /api/oauth/jwks: the public signing keys, RFC 7517 §5."""

from __future__ import annotations

from litestar import asgi
from litestar.types import Receive, Scope, Send

from courseschool.common.web import send_document


@asgi("/api/oauth/jwks", copy_scope=False)
async def jwks(scope: Scope, receive: Receive, send: Send) -> None:
    """Serialised once per key load (every client and resource server fetches it)."""
    ring = scope["app"].state.authz.keys.ring
    await send_document(scope, send, ring.jwks_body, ring.jwks_etag, "application/json")
