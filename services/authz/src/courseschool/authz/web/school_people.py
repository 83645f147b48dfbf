"""GET /oauth/school/people: the school's people page, for its owners (404 for anyone
else): a form inviting a person (e-mail, name, role: admin, lecturer or student; only the
platform's administrators make owners) and the invitations not taken up yet. POST
invites (endpoints/invitations.invite_to_own_school, the use case of `admin users
invite` too), bound to the session by its CSRF token, then 303 back to the page. Both
need a recent sign-in (web/recent_sign_in.py): a new person of the school is as much
a change as one to the owner's own account. A refused invitation (a role, an address,
one of the school's people already) shows the form again with what was typed and why."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, Router, get, post

from courseschool.common.answers import PAGE
from courseschool.common.errors import ConflictError, InvalidRequestError

from ..endpoints.account import school_name
from ..endpoints.invitations import OWNER_INVITES, invite_to_own_school, pending_invitations
from ..endpoints.second_factors import school_owner
from ..protocol.models import User
from . import page_forms
from .http import AccountPagesDep, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .recent_sign_in import ConfirmFirst, recent_sign_in, to_confirm
from .viewer import SignedIn, SignInFirst, signed_in_viewer, to_sign_in

PATH = "/oauth/school/people"
PURPOSE = "school-people"  # the form's CSRF purpose


async def _page(
    account_pages: AccountPagesDep,
    session_id: str,
    user: User,
    *,
    status: int = 200,
    done: bool = False,
    error: str | None = None,
    typed: dict[str, str] | None = None,
) -> Response[Any]:
    return render(
        "school_people.html",
        status=status,
        user=user,
        school_name=await school_name(account_pages, user),
        pending=await pending_invitations(account_pages, user),
        roles=OWNER_INVITES,
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
        done=done,
        error=error,
        typed=typed or {"role": "student"},
        valid_for=_duration(account_pages.settings.invitation_ttl),
        scripts=True,
    )


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    if hours and not rest:
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{max(seconds // 60, 1)} minutes"


@get("/", opt=PAGE, guards=[recent_sign_in])
async def people_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    school_owner(user)
    return await _page(account_pages, session_id, user, done=request.query_params.get("done") == "invited")


@post("/", opt={**PAGE, "back": PATH}, guards=[recent_sign_in])
async def invite_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    school_owner(user)
    fields = await form_fields(request)
    page_forms.check_form_token(account_pages, PURPOSE, session_id, fields.get("csrf", ""))
    typed = {k: fields.get(k, "") for k in ("email", "name", "role")}
    try:
        await invite_to_own_school(account_pages, user, **typed, ip=client_ip(request))
    except (InvalidRequestError, ConflictError) as err:
        why = err.advice if isinstance(err, InvalidRequestError) and err.advice else err.description
        return await _page(account_pages, session_id, user, status=err.status_code, error=why, typed=typed)
    return see_other(f"{PATH}?done=invited")


# Not signed in: the sign-in page, which leads back here.
ROUTER = Router(
    PATH,
    route_handlers=[people_page, invite_submit],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
