"""GET or POST /oauth/authorize: the authorization endpoint, RFC 6749 §3.1; and
`/authorize`, the origin's default path of the MCP 2025-03-26 fallback (listed in no
metadata), which sends the browser there.

Errors before the client and its redirect URI are validated are pages; after, they
go back to the client (both decided by `courseschool.common.answers`)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, route

from courseschool.common.answers import PAGE

from ..endpoints.authorization import start_authorization
from .cookies import binding_cookie, session_cookie_name
from .http import SignInPagesDep, client_agent, client_ip, multi
from .pages import see_other


@route("/oauth/authorize", http_method=["GET", "POST"], status_code=200, opt=PAGE)
async def authorize(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    if request.method == "POST":  # OIDC Core §3.1.2.1 allows form-encoded POST
        params = multi((await request.form()).multi_items())
    else:
        params = multi(request.query_params.multi_items())
    session_id = request.cookies.get(session_cookie_name(sign_in_pages.settings))
    started = await start_authorization(
        sign_in_pages, params, session_id, ip=client_ip(request), agent=client_agent(request)
    )
    if isinstance(started, str):  # remembered consent: straight back to the client
        return see_other(started)
    interaction, binding = started
    cookie = binding_cookie(sign_in_pages.settings, interaction.uid, binding, sign_in_pages.settings.interaction_ttl)
    return see_other(f"/oauth/interaction/{interaction.uid}", cookies=[cookie])


@get("/authorize", status_code=307, opt=PAGE)
async def authorize_fallback(request: Request[Any, Any, Any]) -> Response[bytes]:
    """A 307 to the real endpoint with the query as it came: the browser keeps its method
    and the client's parameters, and every rule of /oauth/authorize applies there."""
    query = request.scope.get("query_string", b"").decode("latin-1")
    location = "/oauth/authorize" + (f"?{query}" if query else "")
    return Response(b"", status_code=307, headers={"Location": location, "Cache-Control": "no-store"})
