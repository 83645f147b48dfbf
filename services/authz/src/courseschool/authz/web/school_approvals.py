"""The school's apps page, its policy and approvals (issue 39): POST .../policy (owners);
GET .../approve (the confirmation: what the approval covers, every area or chosen ones,
a note when it answers a request) and POST .../approve; GET/POST .../decline (a request,
with a note); POST .../withdraw. Every form is bound to the session by its CSRF token;
303 back to the list, which says what was done."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, Router, get, post

from courseschool.common.answers import PAGE
from courseschool.common.scopes import BY_NAME, SCOPES

from ..endpoints.app_approvals import (
    approval_subject,
    approve,
    chosen_scope,
    covers,
    decline,
    pending_request,
    set_policy,
    withdraw,
)
from . import page_forms
from .http import AccountPagesDep, client_ip
from .pages import render, see_other
from .recent_sign_in import ConfirmFirst, recent_sign_in, to_confirm
from .school_apps import DECISION, PATH, PURPOSE, _checked, stewards_only
from .scope_words import scope_lines
from .viewer import SignedIn, SignInFirst, signed_in_viewer, to_sign_in


@post("/policy", opt=DECISION, guards=[recent_sign_in])
async def policy_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    await set_policy(account_pages, user, fields.get("policy", ""), ip=client_ip(request))
    return see_other(f"{PATH}?done=policy")


@get("/approve", opt=PAGE)
async def approve_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    query = request.query_params
    asked = await pending_request(account_pages, user, query["request"]) if query.get("request") else None
    subject, _ = await approval_subject(account_pages, user, asked.client_id if asked else query.get("client_id") or "")
    ticked = set((asked.scope if asked else subject.approved_scope or "").split())
    # Changes asked for an area come with seeing it: an approval of writes alone would
    # leave the app blind there should the policy become "only approved apps".
    ticked |= {s.replace(":write", ":read") for s in ticked if s.replace(":write", ":read") in BY_NAME}
    return render(
        "school_apps_approve.html",
        app=subject,
        covers=covers(subject.kind),
        asked=asked,
        asked_lines=scope_lines(asked.scope.split()) if asked else [],
        areas=[line for line in scope_lines(s.name for s in SCOPES) if line.key != "identity"],
        ticked=ticked,
        every_area=not ticked,
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
    )


@post("/approve", opt=DECISION, guards=[recent_sign_in])
async def approve_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    form = await request.form()
    ticked = [v for v in form.getall("scope") if isinstance(v, str)] if "scope" in form else []
    scope = chosen_scope(fields.get("cover", ""), ticked)
    await approve(
        account_pages,
        user,
        fields.get("client_id", ""),
        scope,
        ip=client_ip(request),
        request_id=fields.get("request") or None,
        note=fields.get("note"),
    )
    return see_other(f"{PATH}?done=approved")


@get("/decline", opt=PAGE)
async def decline_page(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    session_id, user = viewer
    asked = await pending_request(account_pages, user, request.query_params.get("request") or "")
    return render(
        "school_apps_decline.html",
        asked=asked,
        asked_lines=scope_lines(asked.scope.split()),
        csrf=page_forms.form_token(account_pages, PURPOSE, session_id),
    )


@post("/decline", opt=DECISION, guards=[recent_sign_in])
async def decline_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    await decline(account_pages, user, fields.get("request", ""), fields.get("note"), ip=client_ip(request))
    return see_other(f"{PATH}?done=declined")


@post("/withdraw", opt=DECISION, guards=[recent_sign_in])
async def withdraw_submit(
    request: Request[Any, Any, Any], account_pages: AccountPagesDep, viewer: SignedIn
) -> Response[Any]:
    user, fields = await _checked(request, account_pages, viewer)
    await withdraw(account_pages, user, fields.get("client_id", ""), ip=client_ip(request))
    return see_other(f"{PATH}?done=withdrawn")


ROUTER = Router(
    PATH,
    route_handlers=[policy_submit, approve_page, approve_submit, decline_page, decline_submit, withdraw_submit],
    guards=[stewards_only],
    dependencies={"viewer": signed_in_viewer(PATH)},
    exception_handlers={SignInFirst: to_sign_in, ConfirmFirst: to_confirm},
)
