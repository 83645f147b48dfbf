"""GET /oauth/apps: the signed-in person's connected apps, each with its sign-ins.
Ending one sign-in and removing an app everywhere each go through a confirmation page
(GET /oauth/apps/{grant_id}/end, /oauth/apps/{grant_id}/remove-app, /oauth/apps/remove-all) whose form posts to
/oauth/apps/{grant_id}/remove, /remove-app or /oauth/apps/remove-all (every app).
Each form is bound to the session by its CSRF token, 303 back to the list with a notice
naming what ended. Not signed in: to the sign-in page, and back here afterwards."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Request, Response, Router, get, post
from litestar.params import FromPath

from courseschool.common.answers import PAGE

from ..endpoints.connected_apps import (
    ConnectedApp,
    Ending,
    SignIn,
    app_of,
    apps_page,
    connected_apps,
    end_sign_in,
    live_sign_in,
    remove_all,
    remove_app,
)
from ..families import AccountPages
from ..protocol.models import User
from . import page_forms
from .activity_words import activity_view
from .http import AccountPagesDep
from .interaction import form_fields
from .pages import render, see_other, utc_iso, utc_text
from .scope_words import ScopeLine, scope_lines
from .viewer import SignedIn, SignInFirst, Viewer, signed_in_viewer, to_sign_in

PATH = "/oauth/apps"
PURPOSE = "apps"  # the forms' CSRF purpose
DONE = ("removed-all",)  # what the list may confirm after removing every app


class Moment(msgspec.Struct, frozen=True):
    iso: str  # for <time datetime>, which the page's script shows in the reader's time zone
    text: str  # for the person without script: "23 Nov 2026, 14:21 UTC"


class SignInRow(msgspec.Struct, frozen=True, kw_only=True):
    sign_in: SignIn
    lines: list[ScopeLine]
    approved: Moment
    grew: Moment | None  # the access grew in the same sign-in (a step-up)
    last_used: Moment | None


class AppCard(msgspec.Struct, frozen=True, kw_only=True):
    app: ConnectedApp
    sign_ins: list[SignInRow]


def moment(epoch: int) -> Moment:
    return Moment(utc_iso(epoch), utc_text(epoch))


def _card(app: ConnectedApp) -> AppCard:
    return AppCard(
        app=app,
        sign_ins=[
            SignInRow(
                sign_in=one,
                lines=scope_lines(one.scope),
                approved=moment(one.approved_at),
                grew=moment(one.grew_at) if one.grew_at is not None else None,
                last_used=moment(one.last_used_at) if one.last_used_at is not None else None,
            )
            for one in app.sign_ins
        ],
    )


def _confirm(request: Request[Any, Any, Any]) -> tuple[Ending, str] | None:
    """The ending the address asks the list to confirm (checked against the record by the use case)."""
    endings: tuple[Ending, ...] = ("ended", "removed")
    for what in endings:
        grant_id = request.query_params.get(what)
        if grant_id:
            return what, grant_id
    return None


@get("/", opt=PAGE)
async def apps_list(request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    session_id, user = viewer
    done = request.query_params.get("done")
    page = await apps_page(account_pages, user, session_id, confirm=_confirm(request))
    record = page.activity
    return render(
        "apps.html",
        email=user.email,
        cards=[_card(app) for app in page.apps],
        by_school=[(e, moment(e.ended_at)) for e in page.ended_by_school],
        activity=None if record is None else {g: activity_view([a]) for g, a in record.items()},
        notices=page.notices,
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
        done=done if done in DONE else None,
        notice=(page.confirmed[0], _card(page.confirmed[1])) if page.confirmed else None,
        scripts=True,
    )


def _confirmation(
    account_pages: AccountPages, viewer: Viewer, action: str, grant_id: str, card: AppCard
) -> Response[Any]:
    csrf = page_forms.form_token(account_pages, PURPOSE, viewer.session_id)
    return render("apps_confirm.html", action=action, card=card, grant_id=grant_id, csrf=csrf, scripts=True)


@get("/remove-all", opt=PAGE)
async def confirm_remove_all(account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    """ "Remove all" confirms first, as every other removal does: the apps it ends, named."""
    cards = [_card(app) for app in await connected_apps(account_pages, viewer.user)]
    csrf = page_forms.form_token(account_pages, PURPOSE, viewer.session_id)
    return render("apps_confirm.html", action="remove-all", cards=cards, csrf=csrf, scripts=True)


@get("/{grant_id:str}/end", opt=PAGE)
async def confirm_end(grant_id: FromPath[str], account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    card = _card(await live_sign_in(account_pages, viewer.user, grant_id))
    return _confirmation(account_pages, viewer, "end", grant_id, card)


@get("/{grant_id:str}/remove-app", opt=PAGE)
async def confirm_remove_app(
    grant_id: FromPath[str], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    card = _card(await app_of(account_pages, viewer.user, grant_id))
    return _confirmation(account_pages, viewer, "remove-app", grant_id, card)


async def _checked(request: Request[Any, Any, Any], account_pages: AccountPages, viewer: Viewer) -> User:
    """The person whose form this is (403 unless its CSRF token is of their session)."""
    page_forms.check_form_token(account_pages, PURPOSE, viewer.session_id, (await form_fields(request)).get("csrf", ""))
    return viewer.user


@post("/{grant_id:str}/remove", opt=PAGE)
async def end_sign_in_submit(
    grant_id: FromPath[str], request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    """End one sign-in (the confirmation page's form)."""
    await end_sign_in(account_pages, await _checked(request, account_pages, viewer), grant_id)
    return see_other(f"{PATH}?{urlencode({'ended': grant_id})}")


@post("/{grant_id:str}/remove-app", opt=PAGE)
async def remove_app_submit(
    grant_id: FromPath[str], request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    """End every sign-in of the app this one belongs to (the confirmation page's form)."""
    await remove_app(account_pages, await _checked(request, account_pages, viewer), grant_id)
    return see_other(f"{PATH}?{urlencode({'removed': grant_id})}")


@post("/remove-all", opt=PAGE)
async def remove_all_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    await remove_all(account_pages, await _checked(request, account_pages, viewer))
    return see_other(f"{PATH}?done=removed-all")


# Not signed in: every page and form answers with the sign-in page, which leads back to the list.
ROUTER = Router(
    PATH,
    route_handlers=[
        apps_list,
        confirm_remove_all,
        confirm_end,
        confirm_remove_app,
        end_sign_in_submit,
        remove_app_submit,
        remove_all_submit,
    ],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in},
)
