"""GET /oauth/school/apps: the school's apps, for its owners and admins (404 for anyone
else); GET .../confirm: the confirmation of an action, naming the app (and the person);
POST .../end and .../block (.../unblock): the action, bound to the session by its CSRF
token, then 303 back to the list, which says what ended. The app is named by a form
field, not the path: a metadata document's client id is a URL.

Who may see these pages is declared once, on the routers (this one and
school_approvals.py's): `stewards_only`, the school's owners and admins; a route added
without it fails tests/unit/test_school_apps_routes_are_for_stewards.py."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, Router, get, post
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from courseschool.common.answers import PAGE
from courseschool.common.errors import InvalidRequestError

from ..endpoints.account import school_name
from ..endpoints.app_approvals import covers
from ..endpoints.school_apps import app_at_school, block, end_access, steward, unblock
from ..endpoints.school_apps_page import school_apps_page
from ..endpoints.signin import signed_in_user
from ..families import AccountPages
from ..protocol.models import User
from . import page_forms
from .activity_words import activity_view
from .cookies import session_cookie_name
from .http import AccountPagesDep, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .recent_sign_in import ConfirmFirst, recent_sign_in, to_confirm
from .scope_words import scope_lines
from .viewer import SignedIn, SignInFirst, Viewer, signed_in_viewer, to_sign_in

PATH = "/oauth/school/apps"
# A steward's decision for the whole school needs a recent sign-in (web/recent_sign_in.py);
# without one, the confirmation leads back to the school's apps page.
DECISION = {**PAGE, "back": PATH}
PURPOSE = "school-apps"  # the forms' CSRF purpose
ACTIONS = ("end-person", "end-all", "block")
DONE = ("ended", "ended-all", "blocked", "unblocked", "policy", "approved", "declined", "withdrawn")


@get("/", opt=PAGE)
async def school_apps_list(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    page = await school_apps_page(account_pages, user)
    done = request.query_params.get("done")
    return render(
        "school_apps.html",
        activity=None if page.activity is None else {k: activity_view(v) for k, v in page.activity.items()},
        user=user,
        school_name=page.school_name,
        # What it may do with the school's data (who the person is, "your identity", is theirs).
        apps=[
            (app, [line for line in scope_lines({s for p in app.people for s in p.scope}) if line.key != "identity"])
            for app in page.apps
        ],
        blocked=page.blocked,
        rules=page.rules,  # the school's policy, approvals and people's requests
        covers=covers,
        scope_lines=scope_lines,
        owner=user.role == "owner",  # an owner's decisions are an owner's to change
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
        done=done if done in DONE else None,
    )


@get("/confirm", opt=PAGE)
async def confirm_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    query = request.query_params
    action, client_id, person = query.get("action"), query.get("client_id") or "", query.get("person")
    if action not in ACTIONS or (action == "end-person") != (person is not None):
        raise InvalidRequestError("choose an action from the school's apps page", advice="Go back and try again.")
    app = await app_at_school(account_pages, user, client_id)
    named = next((p for p in app.people if p.user_id == person), None)
    if action == "end-person" and named is None:
        raise InvalidRequestError("that person holds no access to this app", advice="Go back and try again.")
    return render(
        "school_apps_confirm.html",
        app=app,
        action=action,
        person=named,
        school_name=await school_name(account_pages, user),
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
    )


async def _checked(
    request: Request[Any, Any, Any], account_pages: AccountPages, viewer: Viewer
) -> tuple[User, dict[str, str]]:
    """The steward whose form this is (403 unless its CSRF token is of their session), and its fields."""
    fields = await form_fields(request)
    page_forms.check_form_token(account_pages, PURPOSE, viewer.session_id, fields.get("csrf", ""))
    return viewer.user, fields


@post("/end", opt=DECISION, guards=[recent_sign_in])
async def end_access_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    person = fields.get("person") or None
    await end_access(account_pages, user, fields.get("client_id", ""), person, ip=client_ip(request))
    return see_other(f"{PATH}?done={'ended' if person else 'ended-all'}")


@post("/block", opt=DECISION, guards=[recent_sign_in])
async def block_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    await block(account_pages, user, fields.get("client_id", ""), ip=client_ip(request))
    return see_other(f"{PATH}?done=blocked")


@post("/unblock", opt=DECISION, guards=[recent_sign_in])
async def unblock_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    await unblock(account_pages, user, fields.get("client_id", ""), ip=client_ip(request))
    return see_other(f"{PATH}?done=unblocked")


async def stewards_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Litestar guard of the school's apps pages: the person signed in on this browser
    looks after the school's apps (an owner or admin), else 404 (`steward`). Nobody signed
    in: the route's `viewer` answers with the sign-in page."""
    account_pages: AccountPages = connection.app.state.authz.account_pages
    cookie = connection.cookies.get(session_cookie_name(account_pages.settings))
    user = await signed_in_user(account_pages, cookie)
    if user is not None:
        steward(user)


# Not signed in: every page and form answers with the sign-in page, which leads back to the list.
ROUTER = Router(
    PATH,
    route_handlers=[school_apps_list, confirm_page, end_access_submit, block_submit, unblock_submit],
    guards=[stewards_only],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
