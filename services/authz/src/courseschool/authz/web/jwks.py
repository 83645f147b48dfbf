"""GET /api/oauth/jwks: the public signing keys, RFC 7517 §5."""

from __future__ import annotations

from litestar import Litestar, asgi
from litestar.types import Receive, Scope, Send

from courseschool.common.http import Held
from courseschool.common.raw import send_document

PATH = "/api/oauth/jwks"


def current_jwks(app: Litestar) -> Held | None:
    """The document of the key set loaded now, serialised once per key load (every client
    and resource server fetches it); None before the keys are loaded (the route answers
    503 then)."""
    components = app.state.get("authz")
    if components is None or not components.keys.loaded:
        return None
    return components.keys.ring.jwks


@asgi(PATH, copy_scope=False)
async def jwks(scope: Scope, receive: Receive, send: Send) -> None:
    """What the front door (`common.web.HeldDocuments`) does not answer: other methods
    (405), the path written in another form."""
    await send_document(scope, send, scope["app"].state.authz.keys.ring.jwks)
