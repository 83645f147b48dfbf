"""GET /oauth/apps: the signed-in person's connected apps; POST
/oauth/apps/{grant_id}/remove and /oauth/apps/remove-all: remove access (each form
bound to the session by its CSRF token, 303 back to the list). Not signed in: to the
sign-in page, and back here afterwards."""

from __future__ import annotations

import time
from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.params import FromPath

from courseschool.common.answers import PAGE

from ..endpoints import connected_apps as flow
from ..protocol.models import User
from .http import Authz
from .interaction import form_fields, session_cookie_name
from .pages import render, see_other
from .scope_words import ScopeLine, scope_lines
from .signin import signin_url

PATH = "/oauth/apps"
DONE = ("removed", "removed-all")  # what the list may confirm after a removal


class Moment(msgspec.Struct, frozen=True):
    iso: str  # for <time datetime>
    text: str  # for the person: "23 Nov 2026, 14:21 UTC"


class Row(msgspec.Struct, frozen=True, kw_only=True):
    app: flow.ConnectedApp
    lines: list[ScopeLine]
    approved: Moment
    last_used: Moment | None


def moment(epoch: int) -> Moment:
    t = time.gmtime(epoch)
    return Moment(time.strftime("%Y-%m-%dT%H:%M:%SZ", t), f"{t.tm_mday} {time.strftime('%b %Y, %H:%M', t)} UTC")


def _row(app: flow.ConnectedApp) -> Row:
    return Row(
        app=app,
        lines=scope_lines(app.scope),
        approved=moment(app.approved_at),
        last_used=moment(app.last_used_at) if app.last_used_at is not None else None,
    )


async def _viewer(request: Request[Any, Any, Any], authz: Authz) -> tuple[str, User] | None:
    """This browser's session id and its person, when signed in."""
    session_id = request.cookies.get(session_cookie_name(authz.settings))
    user = await flow.signed_in_user(authz, session_id)
    return (session_id, user) if user is not None and session_id is not None else None


@get(PATH, opt=PAGE)
async def apps_page(request: Request[Any, Any, Any], authz: Authz) -> Response[Any]:
    viewer = await _viewer(request, authz)
    if viewer is None:
        return see_other(signin_url(PATH))
    session_id, user = viewer
    done = request.query_params.get("done")
    return render(
        "apps.html",
        email=user.email,
        rows=[_row(app) for app in await flow.connected_apps(authz, user)],
        csrf=flow.form_token(authz, session_id),
        done=done if done in DONE else None,
    )


@post(f"{PATH}/{{grant_id:str}}/remove", opt=PAGE)
async def remove_app(grant_id: FromPath[str], request: Request[Any, Any, Any], authz: Authz) -> Response[Any]:
    viewer = await _viewer(request, authz)
    if viewer is None:
        return see_other(signin_url(PATH))
    session_id, user = viewer
    flow.check_form(authz, session_id, (await form_fields(request)).get("csrf", ""))
    await flow.remove(authz, user, grant_id)
    return see_other(f"{PATH}?done=removed")


@post(f"{PATH}/remove-all", opt=PAGE)
async def remove_all_apps(request: Request[Any, Any, Any], authz: Authz) -> Response[Any]:
    viewer = await _viewer(request, authz)
    if viewer is None:
        return see_other(signin_url(PATH))
    session_id, user = viewer
    flow.check_form(authz, session_id, (await form_fields(request)).get("csrf", ""))
    await flow.remove_all(authz, user)
    return see_other(f"{PATH}?done=removed-all")
