"""GET or POST /oauth/logout: sign-out, and the `end_session_endpoint` of OpenID
Connect RP-Initiated Logout 1.0. A request (from a client, or our pages' "Sign out")
shows a confirmation; its form posts back with a CSRF token; then the session ends,
its cookie is dropped, and the browser goes to the client's validated
`post_logout_redirect_uri`, or to a page that says it is signed out. Without a session
to end, nothing redirects: the signed-out page offers the way back as a link."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, route

from courseschool.common.answers import PAGE

from ..endpoints.logout import after_sign_out, current_session, logout_request, sign_out
from . import page_forms
from .cookies import session_cookie, session_cookie_name
from .http import SignInPagesDep, client_ip, multi
from .pages import render, see_other

CONFIRMED = "csrf"  # the confirmation form's field
PURPOSE = "logout"  # its CSRF purpose: a MAC of the session id (page_forms)


@route("/oauth/logout", http_method=["GET", "POST"], opt=PAGE)
async def logout(request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep) -> Response[Any]:
    if request.method == "POST":
        params = multi((await request.form()).multi_items())
    else:
        params = multi(request.query_params.multi_items())
    wanted = await logout_request(sign_in_pages, params, ip=client_ip(request))
    cookie_name = session_cookie_name(sign_in_pages.settings)
    session_id = request.cookies.get(cookie_name)
    location = after_sign_out(wanted)
    session = await current_session(sign_in_pages, session_id)
    if session is None or session_id is None:  # nothing to end, and no one who confirmed
        return render("signed_out.html", back=location, request=wanted)
    if request.method == "POST" and CONFIRMED in params:
        page_forms.check_form_token(sign_in_pages, PURPOSE, session_id, params[CONFIRMED][0])
        await sign_out(sign_in_pages, session_id)
        gone = session_cookie(sign_in_pages.settings, "", 0)
        if location is not None:
            return see_other(location, cookies=[gone])
        return render("signed_out.html", cookies=[gone])
    user = await sign_in_pages.users.get(session.user_id)
    return render(
        "logout.html",
        csrf=page_forms.form_token(sign_in_pages, PURPOSE, session_id),
        request=wanted,
        email=user.email if user else "",
        form_target=wanted.post_logout_redirect_uri,
    )
