"""The passkeys of the signed-in person, under their security page (/oauth/security):

- GET /oauth/security/passkeys/new: adding one (a name, then the browser's dialog, run by
  our script); POST /oauth/security/passkeys: the browser's answer, verified (the
  person's first second factor: on to its recovery codes, shown once).
- GET and POST /oauth/security/passkeys/{id}/rename: its name.
- GET /oauth/security/passkeys/{id}/remove: the confirmation; its form POSTs there.

Adding, renaming and removing one need a recent sign-in (web/recent_sign_in.py), and
each is told to the person by e-mail. Every form's CSRF token is bound to the session
and to its purpose: the removal's (and a rename's) to that passkey, given only by its
own page, so a removal is always confirmed.
303 after every POST; not signed in: the sign-in page, and back here afterwards."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, Router, get, post
from litestar.params import FromPath

from courseschool.common.answers import PAGE

from ..endpoints.passkeys import (
    NOT_SAVED,
    add_passkey,
    begin_registration,
    passkey_of,
    remove_passkey,
    rename_passkey,
)
from ..endpoints.second_factors import security_view
from ..families import AccountPages
from . import page_forms
from .http import AccountPagesDep, client_agent, client_ip
from .interaction import form_fields
from .pages import render, see_other
from .recent_sign_in import ConfirmFirst, recent_sign_in, to_confirm
from .viewer import SignedIn, SignInFirst, Viewer, signed_in_viewer, to_sign_in

SECURITY = "/oauth/security"
PATH = f"{SECURITY}/passkeys"
ADD = "passkey-add"  # the forms' CSRF purposes; a rename's and a removal's name the passkey


def _purpose(action: str, passkey_id: str) -> str:
    return f"passkey-{action}:{passkey_id}"


@get("/new", opt=PAGE, guards=[recent_sign_in])
async def new_passkey_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    options = await begin_registration(account_pages, user, session_id)
    return render(
        "passkey_new.html",
        action=PATH,
        csrf=page_forms.form_token(account_pages, ADD, session_id),
        options=options,
        name=client_agent(request) or "",
        error=NOT_SAVED if request.query_params.get("failed") else None,
        passkey_script=True,
    )


@post("/", opt={**PAGE, "back": f"{PATH}/new"}, guards=[recent_sign_in])
async def add_passkey_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await form_fields(request)
    page_forms.check_form_token(account_pages, ADD, viewer.session_id, fields.get("csrf", ""))
    added = await add_passkey(
        account_pages,
        viewer.user,
        viewer.session_id,
        fields.get("name", ""),
        fields.get("credential", ""),
        ip=client_ip(request),
        agent=client_agent(request),
    )
    if added is None:
        return see_other(f"{PATH}/new?failed=1")
    if added.recovery_codes:  # the first second factor: its recovery codes, shown once
        await account_pages.second_steps.keep_codes(f"session:{viewer.session_id}", added.recovery_codes)
        return see_other(f"{SECURITY}/codes?new=passkey")
    return see_other(f"{SECURITY}?done=passkey-added")


@get("/{passkey_id:str}/rename", opt=PAGE)
async def rename_page(passkey_id: FromPath[str], account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    return await _change_page("rename", passkey_id, account_pages, viewer)


@get("/{passkey_id:str}/remove", opt=PAGE)
async def remove_page(passkey_id: FromPath[str], account_pages: AccountPagesDep, viewer: SignedIn) -> Response[Any]:
    """The removal's confirmation: the only page that gives its form's token."""
    return await _change_page("remove", passkey_id, account_pages, viewer)


async def _change_page(action: str, passkey_id: str, account_pages: AccountPages, viewer: Viewer) -> Response[Any]:
    session_id, user = viewer
    passkey = await passkey_of(account_pages, user, passkey_id)
    view = await security_view(account_pages, user)
    return render(
        "passkey_change.html",
        action=action,
        passkey=passkey,
        last=view.factors.passkeys == 1,
        required=view.required,
        has_app=view.factors.totp,
        csrf=page_forms.form_token(account_pages, _purpose(action, passkey.id), session_id),
    )


@post("/{passkey_id:str}/rename", opt={**PAGE, "back": SECURITY}, guards=[recent_sign_in])
async def rename_submit(
    passkey_id: FromPath[str], request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await form_fields(request)
    page_forms.check_form_token(
        account_pages, _purpose("rename", passkey_id), viewer.session_id, fields.get("csrf", "")
    )
    await rename_passkey(
        account_pages,
        viewer.user,
        passkey_id,
        fields.get("name", ""),
        ip=client_ip(request),
        agent=client_agent(request),
    )
    return see_other(f"{SECURITY}?done=passkey-renamed")


@post("/{passkey_id:str}/remove", opt={**PAGE, "back": SECURITY}, guards=[recent_sign_in])
async def remove_submit(
    passkey_id: FromPath[str], request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    fields = await form_fields(request)
    page_forms.check_form_token(
        account_pages, _purpose("remove", passkey_id), viewer.session_id, fields.get("csrf", "")
    )
    await remove_passkey(account_pages, viewer.user, passkey_id, ip=client_ip(request), agent=client_agent(request))
    return see_other(f"{SECURITY}?done=passkey-removed")


ROUTER = Router(
    PATH,
    route_handlers=[new_passkey_page, add_passkey_submit, rename_page, remove_page, rename_submit, remove_submit],
    dependencies={"viewer": signed_in_viewer(SECURITY)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
