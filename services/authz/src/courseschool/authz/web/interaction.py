"""The login and consent pages of the interaction (`/oauth/interaction/{uid}`):
bound to the browser that started it by a cookie, every form CSRF-protected,
303 after every POST."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

from courseschool.common.answers import PAGE
from courseschool.common.errors import ForbiddenError, InvalidRequestError, fit_description
from courseschool.common.secrets import same

from ..endpoints.access_requests import ask
from ..endpoints.decision_page import hand_off, take_handoff
from ..endpoints.interaction import (
    client_label,
    client_name,
    consent_view,
    decide,
    login,
    open_interaction,
    switch_user,
)
from ..endpoints.interaction_second_step import login_second_step, recovery_codes_to_show
from ..endpoints.passkey_enrolment import PASSKEY_NOT_SAVED, enrolment_options
from ..endpoints.passkey_sign_in import interaction_passkey, second_step_options, sign_in_options
from ..endpoints.second_factors import required_enrolment
from ..families import SignInPages
from ..storage.interactions import Interaction
from .cookies import BINDING_COOKIE, binding_cookie, session_cookie, session_cookie_name
from .http import SignInPagesDep, client_agent, client_ip
from .pages import render, see_other
from .qr import qr_svg
from .scope_words import changes_almost_everything, chosen_scopes, powerful_first, scope_lines, sweeping_changes

MAX_FORM_FIELD = 4096


@get("/oauth/interaction/{uid:str}", opt=PAGE)
async def interaction_page(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    binding = request.cookies.get(BINDING_COOKIE) or ""
    session = request.cookies.get(session_cookie_name(sign_in_pages.settings))
    interaction = await open_interaction(sign_in_pages, uid, binding, session)
    if interaction.user_id is None and interaction.second_step is not None:
        return await _second_step_page(request, sign_in_pages, interaction, binding)
    if interaction.user_id is None:
        passkey = await sign_in_options(sign_in_pages, binding)
        return render(
            "login.html",
            uid=uid,
            csrf=interaction.csrf,
            error=interaction.login_error,
            client=await client_label(sign_in_pages, interaction),
            login_hint=interaction.login_email or interaction.request.login_hint or "",
            passkey=passkey,
            passkey_script=passkey is not None,
        )
    shown = await recovery_codes_to_show(sign_in_pages, interaction)
    if shown:  # the factor the school required was set up in this sign-in: its codes, once, before consent
        return render("recovery_codes.html", codes=shown[0], new=shown[1], next=f"/oauth/interaction/{uid}")
    view = await consent_view(sign_in_pages, interaction, session)
    new, already = powerful_first(scope_lines(view.new)), scope_lines(view.already)
    sweeping = sweeping_changes(new + already)
    return render(
        "consent.html",
        uid=uid,
        csrf=interaction.csrf,
        view=view,
        form_target=interaction.request.redirect_uri,
        sweeping=sweeping,
        notices=view.notices,
        almost_everything=sweeping is not None and changes_almost_everything(sweeping),
        new=new,
        already=already,
        beyond_registration=scope_lines(view.beyond_registration),
        beyond_role=scope_lines(view.beyond_role),
        needs_approval=scope_lines(view.school.needs_approval) if view.school else [],
    )


async def _second_step_page(
    request: Request[Any, Any, Any], sign_in_pages: SignInPages, interaction: Interaction, binding: str
) -> Response[Any]:
    """After the password: the code, or the second factor the school requires set up."""
    uid, step, error = interaction.uid, interaction.second_step, interaction.login_error
    action = f"/oauth/interaction/{uid}/second-step"
    if step is not None and step.what == "enrol":
        view = await required_enrolment(sign_in_pages, step, by=f"{uid}:{binding}")
        passkey = await enrolment_options(sign_in_pages, step, binding)
        return render(
            "enrol.html",
            action=action,
            csrf=interaction.csrf,
            error=None if error == PASSKEY_NOT_SAVED else error,
            passkey=passkey,
            passkey_action=f"/oauth/interaction/{uid}/passkey",
            passkey_error=error if error == PASSKEY_NOT_SAVED else None,
            passkey_name=client_agent(request) or "",
            passkey_script=passkey is not None,
            qr=qr_svg(view.enrolment.uri, label="QR code to set up your authenticator app"),
            secret=view.enrolment.secret,
            required=True,
            school_name=view.school_name,
            back=None,
        )
    passkey = await second_step_options(sign_in_pages, step, binding) if step is not None else None
    return render(
        "second_step.html",
        action=action,
        csrf=interaction.csrf,
        error=interaction.login_error,
        passkey=passkey,
        passkey_action=f"/oauth/interaction/{uid}/passkey",
        passkey_script=passkey is not None,
    )


async def form_fields(request: Request[Any, Any, Any]) -> dict[str, str]:
    """A page form's fields: text only, each bounded, no NUL (what is not, is left out)."""
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str) and len(v) <= MAX_FORM_FIELD and "\x00" not in v}


async def _checked_form(
    uid: str, request: Request[Any, Any, Any], sign_in_pages: SignInPages
) -> tuple[Interaction, dict[str, str]]:
    """The interaction and the form's fields, if the binding cookie and the CSRF token both match."""
    session = request.cookies.get(session_cookie_name(sign_in_pages.settings))
    interaction = await open_interaction(sign_in_pages, uid, request.cookies.get(BINDING_COOKIE), session)
    fields = await form_fields(request)
    if not same(fields.get("csrf", ""), interaction.csrf):
        raise ForbiddenError("the form's CSRF token does not match the interaction")
    return interaction, fields


@post("/oauth/interaction/{uid:str}/login", opt=PAGE)
async def login_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    interaction, fields = await _checked_form(uid, request, sign_in_pages)
    email, password = fields.get("email", "").strip(), fields.get("password", "")
    session_id = await login(
        sign_in_pages, interaction, email, password, ip=client_ip(request), agent=client_agent(request)
    )
    cookies = []
    if session_id is not None:
        cookies.append(session_cookie(sign_in_pages.settings, session_id, sign_in_pages.settings.session_ttl))
    return see_other(f"/oauth/interaction/{uid}", cookies=cookies)


@post("/oauth/interaction/{uid:str}/second-step", opt=PAGE)
async def second_step_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    """The code after the password (or the first code of the app the school requires)."""
    interaction, fields = await _checked_form(uid, request, sign_in_pages)
    code, ip, agent = fields.get("code", ""), client_ip(request), client_agent(request)
    session_id = await login_second_step(sign_in_pages, interaction, code, ip=ip, agent=agent)
    cookies = []
    if session_id is not None:
        cookies.append(session_cookie(sign_in_pages.settings, session_id, sign_in_pages.settings.session_ttl))
    return see_other(f"/oauth/interaction/{uid}", cookies=cookies)


@post("/oauth/interaction/{uid:str}/passkey", opt=PAGE)
async def passkey_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    """A passkey in place of the password, or as the second step after it (or set up there)."""
    interaction, fields = await _checked_form(uid, request, sign_in_pages)
    binding, credential = request.cookies.get(BINDING_COOKIE), fields.get("credential", "")
    session_id = await interaction_passkey(
        sign_in_pages,
        interaction,
        binding,
        credential,
        ip=client_ip(request),
        agent=client_agent(request),
        name=fields.get("name", ""),
    )
    cookies = []
    if session_id is not None:  # its address and browser recorded where it was opened (_open_session)
        cookies.append(session_cookie(sign_in_pages.settings, session_id, sign_in_pages.settings.session_ttl))
    return see_other(f"/oauth/interaction/{uid}", cookies=cookies)


@post("/oauth/interaction/{uid:str}/consent", opt=PAGE)
async def consent_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    interaction, fields = await _checked_form(uid, request, sign_in_pages)
    decision = fields.get("decision")
    name = await client_name(sign_in_pages, interaction)
    if interaction.user_id is None or decision not in ("approve", "deny"):
        raise InvalidRequestError(
            "the consent form needs a signed-in user and a decision", advice="Sign in, then choose Allow or Deny."
        )
    kept = await _kept_scopes(request, fields, interaction) if decision == "approve" else None
    decided = await decide(
        sign_in_pages,
        uid,
        approve=decision == "approve",
        ip=client_ip(request),
        kept=kept,
        session_id=request.cookies.get(session_cookie_name(sign_in_pages.settings)),
        agent=client_agent(request),
    )
    if interaction.request.decision_page:  # the outcome on a page of ours first; the cookie stays for it
        await hand_off(sign_in_pages, interaction, decided.location, outcome=decided.outcome, name=name)
        return see_other(f"/oauth/interaction/{uid}/done")
    expired = binding_cookie(sign_in_pages.settings, uid, "", 0)
    return see_other(decided.location, cookies=[expired])


async def _kept_scopes(
    request: Request[Any, Any, Any], fields: dict[str, str], interaction: Interaction
) -> list[str] | None:
    """What the consent form left ticked (RFC 6749 §3.3: the person may grant less than
    asked), or None for a form that offers no choice (it grants what the page showed)."""
    if fields.get("choices") != "1":
        return None
    form = await request.form()

    def named(field: str) -> list[str]:
        values = form.getall(field) if field in form else []
        return [v for v in values if isinstance(v, str) and len(v) <= MAX_FORM_FIELD]

    try:
        return chosen_scopes(interaction.shown or [], named("keep"), named("keep_changes"), named("has_changes"))
    except ValueError as exc:
        raise InvalidRequestError(
            fit_description(str(exc)),
            advice="The form was changed after the page sent it. Go back to the app and start again.",
        ) from None


@get("/oauth/interaction/{uid:str}/done", opt=PAGE)
async def decision_page(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    """What was decided, then back to the app when the person chooses (a focused link
    styled as a button: the same GET of the redirect URI a loopback listener waits for;
    no timed refresh, WCAG 2.2.1): if the app's listener is gone, the person still knows
    the outcome."""
    handoff = await take_handoff(sign_in_pages, uid, request.cookies.get(BINDING_COOKIE))
    expired = binding_cookie(sign_in_pages.settings, uid, "", 0)
    return render("decided.html", handoff=handoff, form_target=handoff.location, cookies=[expired])


@post("/oauth/interaction/{uid:str}/switch", opt=PAGE)
async def switch_user_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    """ "Not you? Sign out": end the session, back to the sign-in form of this interaction."""
    interaction, _ = await _checked_form(uid, request, sign_in_pages)
    await switch_user(sign_in_pages, interaction, request.cookies.get(session_cookie_name(sign_in_pages.settings)))
    gone = session_cookie(sign_in_pages.settings, "", 0)
    return see_other(f"/oauth/interaction/{uid}", cookies=[gone])


@post("/oauth/interaction/{uid:str}/ask", opt=PAGE)
async def ask_submit(
    uid: FromPath[str], request: Request[Any, Any, Any], sign_in_pages: SignInPagesDep
) -> Response[Any]:
    """Ask the school to approve the app, with a short reason; back to the consent page,
    which says the request is pending."""
    interaction, fields = await _checked_form(uid, request, sign_in_pages)
    if interaction.user_id is None:
        raise InvalidRequestError("asking needs a signed-in user", advice="Sign in first.")
    await ask(sign_in_pages, interaction, fields.get("reason", ""), ip=client_ip(request))
    return see_other(f"/oauth/interaction/{uid}")
