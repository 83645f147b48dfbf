"""Route handlers. Each one parses its input, calls `AuthzService`, and renders."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, asgi, get, post, route
from litestar.datastructures import Cookie
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.types import Receive, Scope, Send

from courseschool.common.errors import (
    InsufficientScopeError,
    InvalidClientError,
    InvalidClientMetadataError,
    InvalidRequestError,
    InvalidTokenError,
    NotFoundError,
    OAuthError,
    TooManyRequestsError,
    bearer_challenge,
)
from courseschool.common.secrets import same
from courseschool.common.web import NO_STORE, send_document

from ..metadata import authorization_server_metadata, openid_configuration
from ..openapi import authz_openapi
from ..protocol.authorize import AuthorizationError, UnsafeRequestError
from ..service import AuthzService, error_redirect_url
from .pages import STYLESHEET, error_page, render, see_other

MAX_FORM_FIELD = 4096
Authz = NamedDependency[AuthzService]


def _multi(items: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in items:
        if isinstance(value, str):
            if "\x00" in key or "\x00" in value:
                raise InvalidRequestError("parameters must not contain NUL characters")
            out.setdefault(key, []).append(value)
    return out


def _ip(request: Request) -> str:
    """The caller's address (`serve` puts a trusted proxy's X-Forwarded-For here; FORWARDED_ALLOW_IPS)."""
    return request.client.host if request.client else "unknown"


def _session_cookie_name(authz: AuthzService) -> str:
    return "__Host-cs_session" if authz.settings.cookie_secure else "cs_session"


def _binding_cookie(authz: AuthzService, uid: str, value: str, max_age: int) -> Cookie:
    return Cookie(
        key="cs_interaction", value=value, path=f"/oauth/interaction/{uid}", httponly=True,
        secure=authz.settings.cookie_secure, samesite="lax", max_age=max_age,
    )


def _json(body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json", headers=headers or {})


# -- registration (RFC 7591 §3) -------------------------------------------------

@post("/api/oauth/register", status_code=201)
async def register(request: Request, authz: Authz) -> Response[bytes]:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise InvalidClientMetadataError("the request body must be application/json")
    body = await request.body()
    return _json(await authz.register_client(body, ip=_ip(request)), status=201, headers=NO_STORE)


# -- authorization endpoint (RFC 6749 §3.1) --------------------------------------

@route("/oauth/authorize", http_method=["GET", "POST"], status_code=200)
async def authorize(request: Request, authz: Authz) -> Response[Any]:
    try:
        if request.method == "POST":  # OIDC Core §3.1.2.1 allows form-encoded POST
            params = _multi((await request.form()).multi_items())
        else:
            params = _multi(request.query_params.multi_items())
    except InvalidRequestError as exc:  # before the client is known: a page, never a redirect
        return error_page(exc.description)
    try:
        started = await authz.start_authorization(params, request.cookies.get(_session_cookie_name(authz)))
    except UnsafeRequestError as exc:
        return error_page(exc.description)
    except AuthorizationError as exc:
        return see_other(error_redirect_url(exc.error, exc.redirect_uri, exc.state, authz.settings.issuer))
    if isinstance(started, str):  # remembered consent: straight back to the client
        return see_other(started)
    interaction, binding = started
    cookie = _binding_cookie(authz, interaction.uid, binding, authz.settings.interaction_ttl)
    return see_other(f"/oauth/interaction/{interaction.uid}", cookies=[cookie])


# -- the interaction: login and consent pages ---------------------------------------

EXPIRED = (
    "This sign-in request has expired, was already completed, or was opened in another browser."
)


@get("/oauth/interaction/{uid:str}")
async def interaction_page(uid: FromPath[str], request: Request, authz: Authz) -> Response[Any]:
    interaction = await authz.open_interaction(uid, request.cookies.get("cs_interaction"))
    if interaction is None:
        return error_page(EXPIRED)
    if interaction.user_id is None:
        client = await authz.directory.get(interaction.request.client_id)
        return render(
            "login.html", uid=uid, csrf=interaction.csrf, error=interaction.login_error,
            client_name=(client.client_name if client and client.client_name else "An application"),
            login_hint=interaction.request.login_hint or "",
        )
    view = await authz.consent_view(interaction)
    if view is None:
        return error_page(EXPIRED)
    return render("consent.html", uid=uid, csrf=interaction.csrf, view=view, form_target=interaction.request.redirect_uri)


async def _checked_form(uid: FromPath[str], request: Request, authz: Authz) -> tuple[Any, dict[str, str]] | Response[Any]:
    """The interaction, if the binding cookie and the CSRF token both match."""
    interaction = await authz.open_interaction(uid, request.cookies.get("cs_interaction"))
    if interaction is None:
        return error_page(EXPIRED)
    form = await request.form()
    fields = {k: v for k, v in form.items() if isinstance(v, str) and len(v) <= MAX_FORM_FIELD and "\x00" not in v}
    if not same(fields.get("csrf", ""), interaction.csrf):
        return error_page("The form was not sent from this page. Go back and try again.", status=403)
    return interaction, fields


@post("/oauth/interaction/{uid:str}/login")
async def login_submit(uid: FromPath[str], request: Request, authz: Authz) -> Response[Any]:
    checked = await _checked_form(uid, request, authz)
    if isinstance(checked, Response):
        return checked
    interaction, fields = checked
    try:
        session_id = await authz.login(
            interaction, fields.get("email", "").strip(), fields.get("password", ""), ip=_ip(request)
        )
    except TooManyRequestsError as exc:
        page = error_page(f"{exc.description.capitalize()} (about {exc.retry_after} s).", status=429)
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    cookies = []
    if session_id is not None:
        cookies.append(
            Cookie(
                key=_session_cookie_name(authz), value=session_id, path="/", httponly=True,
                secure=authz.settings.cookie_secure, samesite="lax", max_age=authz.settings.session_ttl,
            )
        )
    return see_other(f"/oauth/interaction/{uid}", cookies=cookies)


@post("/oauth/interaction/{uid:str}/consent")
async def consent_submit(uid: FromPath[str], request: Request, authz: Authz) -> Response[Any]:
    checked = await _checked_form(uid, request, authz)
    if isinstance(checked, Response):
        return checked
    interaction, fields = checked
    decision = fields.get("decision")
    if interaction.user_id is None or decision not in ("approve", "deny"):
        return error_page("Sign in and choose Allow or Deny.")
    try:
        location = await authz.decide(uid, approve=decision == "approve")
    except InvalidRequestError as exc:
        return error_page(exc.description)
    expired = _binding_cookie(authz, uid, "", 0)
    return see_other(location, cookies=[expired])


@get("/oauth/assets/style.css")
async def stylesheet() -> Response[bytes]:
    return Response(STYLESHEET, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})


# -- token endpoint (RFC 6749 §3.2) -------------------------------------------------

@post("/api/oauth/token", status_code=200)
async def token(request: Request, authz: Authz) -> Response[bytes]:
    _require_form(request)
    form = await request.form()
    response = await authz.token(_multi(form.multi_items()), ip=_ip(request))
    return Response(msgspec.json.encode(response), media_type="application/json", headers=NO_STORE)


def _require_form(request: Request) -> None:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise InvalidRequestError("the request body must be application/x-www-form-urlencoded")
    if request.headers.get("authorization"):
        raise InvalidClientError("HTTP authentication is not supported; use client_secret_post or none")


@post("/api/oauth/revoke", status_code=200)
async def revoke(request: Request, authz: Authz) -> Response[bytes]:
    """RFC 7009 §2.2: 200 with an empty body, known token or not."""
    _require_form(request)
    await authz.revoke(_multi((await request.form()).multi_items()), ip=_ip(request))
    return Response(b"", headers=NO_STORE)


@post("/api/oauth/introspect", status_code=200)
async def introspect(request: Request, authz: Authz) -> Response[bytes]:
    _require_form(request)
    body = await authz.introspect(_multi((await request.form()).multi_items()), ip=_ip(request))
    return _json(body, headers=NO_STORE)


# -- UserInfo (OIDC Core §5.3) and JWKS -----------------------------------------------

def _bearer(request: Request) -> str | None:
    """RFC 6750 §2.1: the Authorization header only; a token in the query is ignored."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip() or " " in value.strip():
        raise InvalidTokenError("the Authorization header must be 'Bearer <access token>'")
    return value.strip()


@route("/api/oauth/userinfo", http_method=["GET", "POST"], status_code=200)
async def userinfo(request: Request, authz: Authz) -> Response[bytes]:
    metadata_url = f"{authz.settings.base_url}/.well-known/oauth-protected-resource"
    try:
        token_value = _bearer(request)
        if token_value is None:
            err = InvalidTokenError("an access token is required")
            err.headers["WWW-Authenticate"] = bearer_challenge(None, metadata_url)
            raise err
        claims = await authz.verify_bearer(token_value)
        if "openid" not in str(claims.get("scope", "")).split():
            raise InsufficientScopeError("the access token was not granted the openid scope", scope="openid")
        body = await authz.userinfo(claims)
    except OAuthError as err:
        if "WWW-Authenticate" not in err.headers and isinstance(err, (InvalidTokenError, InsufficientScopeError)):
            err.headers["WWW-Authenticate"] = bearer_challenge(err, metadata_url)
        raise
    return _json(body, headers=NO_STORE)


@asgi("/api/oauth/jwks", copy_scope=False)
async def jwks(scope: Scope, receive: Receive, send: Send) -> None:
    """RFC 7517 §5, serialised once per key load (every client and resource server fetches it)."""
    ring = scope["app"].state.holder["service"].key_ring
    await send_document(scope, send, ring.jwks_body, ring.jwks_etag, "application/json")


# -- internal: metadata for the discovery service --------------------------------------

def _check_internal(request: Request, authz: Authz) -> None:
    expected = authz.settings.internal_token
    header = request.headers.get("authorization", "")
    if not expected or not same(header, f"Bearer {expected}"):
        raise NotFoundError("not found")


@get("/internal/metadata/oauth-authorization-server", include_in_schema=False)
async def internal_as_metadata(request: Request, authz: Authz) -> Response[bytes]:
    _check_internal(request, authz)
    return _json(authorization_server_metadata(authz.settings))


@get("/internal/metadata/openid-configuration", include_in_schema=False)
async def internal_oidc_metadata(request: Request, authz: Authz) -> Response[bytes]:
    _check_internal(request, authz)
    return _json(openid_configuration(authz.settings))


@get("/internal/revocations", include_in_schema=False)
async def internal_revocations(request: Request, authz: Authz) -> Response[bytes]:
    """For resource servers (re)joining the revocation feed."""
    _check_internal(request, authz)
    return _json(await authz.revoker.current(), headers=NO_STORE)


@get("/internal/openapi.json", include_in_schema=False)
async def internal_openapi(request: Request, authz: Authz) -> Response[bytes]:
    _check_internal(request, authz)
    return _json(authz_openapi(authz.settings.base_url))


ROUTES = [
    register, authorize, interaction_page, login_submit, consent_submit, stylesheet, token, revoke, introspect,
    userinfo, jwks,
    internal_as_metadata, internal_oidc_metadata, internal_openapi, internal_revocations,
]
