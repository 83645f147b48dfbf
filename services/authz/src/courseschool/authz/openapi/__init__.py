"""The authorization server's OpenAPI 3.1 description: registration (RFC 7591),
authorization (RFC 6749 §4.1.1), token (§4.1.3, §6), revocation (RFC 7009),
introspection (RFC 7662), UserInfo (OIDC Core §5.3) and the JWKS."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import (
    document,
    error_responses,
    example_of,
    json_body,
    schemas_of,
    tag,
    unexpected_response,
)

from ..protocol.models import TokenResponse
from ..protocol.registration import ClientMetadata, ClientUpdate
from .account import account_paths
from .oversight import oversight_paths
from .pages import _AUTHORIZE_PARAMS, _ERROR_PAGE, _logout_operations, _query
from .passkeys import passkey_paths
from .people import people_paths
from .registration import configuration_paths
from .schemas import (
    _CALLBACK,
    _INTROSPECTION,
    _JWKS,
    _JWKS_EXAMPLE,
    _LOCATION,
    _NO_STORE,
    _REGISTERED,
    _USERINFO,
    TAG,
    _documented,
    _form,
    _s,
)
from .school_policy import school_policy_paths
from .security import security_paths
from .tokens import _token_paths


def authz_openapi(base_url: str) -> dict[str, Any]:
    (metadata_ref, token_ref, update_ref), components = schemas_of(ClientMetadata, TokenResponse, ClientUpdate)
    components = _documented(components)
    components.update(RegisteredClient=_REGISTERED, Introspection=_INTROSPECTION, UserInfo=_USERINFO, JWKS=_JWKS)
    ref = {
        name: {"$ref": f"#/components/schemas/{name}"}
        for name in ("RegisteredClient", "Introspection", "UserInfo", "JWKS")
    }
    challenge_401 = {401: {"error": "invalid_token", "error_description": "the access token has expired"}}
    userinfo: dict[str, Any] = {
        "operationId": "userinfo",
        "summary": "Claims about the signed-in user (OIDC Core §5.3)",
        "tags": [TAG],
        "description": "The user the access token acts for: `sub`, plus name and username with `profile`, email "
        "with `email`. Needs an access token with `openid`.",
        "security": [{"oauth2": ["openid"]}, {"dpop": []}],
        "responses": {
            "200": {**json_body(ref["UserInfo"], "The user's claims", example_of(_USERINFO, {})), "headers": _NO_STORE},
            **error_responses(
                401,
                403,
                503,
                examples={
                    **challenge_401,
                    403: {
                        "error": "insufficient_scope",
                        "error_description": "the access token was not granted the openid scope",
                        "scope": "openid",
                    },
                },
            ),
        },
    }
    authorize_params = [_query(*p) for p in _AUTHORIZE_PARAMS]
    form_params = {p["name"]: _s(p["description"], p["example"], p["schema"]) for p in authorize_params}
    form_required = [p["name"] for p in authorize_params if p["required"]]
    see_other = {
        "303": {
            "description": "To the sign-in and consent pages; at last to `redirect_uri` with `code`, `state` and `iss` "
            "(or `error`, `state` and `iss`)",
            "headers": {"Location": {**_LOCATION, "example": "/oauth/interaction/8c1d2e3f"}},
        },
        "400": _ERROR_PAGE,
        **error_responses(503),
        **unexpected_response(),
    }
    registered = {"ref": ref["RegisteredClient"], "example": example_of(_REGISTERED, {})}
    paths = {
        "/api/oauth/register": {
            "post": {
                "operationId": "register_client",
                "summary": "Dynamic client registration (RFC 7591)",
                "tags": [TAG],
                "description": "Open to native clients with loopback redirect URIs (http://127.0.0.1:<port>/...). "
                "Fields left out take the defaults their descriptions state.",
                "security": [{}],
                "requestBody": {
                    **json_body(
                        metadata_ref, "The client's metadata", {"client_name": "My CLI", "redirect_uris": [_CALLBACK]}
                    ),
                    "required": True,
                },
                "responses": {
                    "201": {
                        **json_body(
                            ref["RegisteredClient"],
                            "Registered",
                            {k: v for k, v in example_of(_REGISTERED, {}).items() if not k.startswith("client_secret")},
                        ),
                        "headers": _NO_STORE,
                    },
                    **error_responses(
                        400,
                        413,
                        429,
                        503,
                        examples={
                            400: {
                                "error": "invalid_redirect_uri",
                                "error_description": "redirect URIs must be http on a loopback host",
                            }
                        },
                        descriptions={
                            400: "The metadata is refused: `invalid_redirect_uri` or "
                            "`invalid_client_metadata`; nothing is stored"
                        },
                    ),
                },
            }
        },
        **configuration_paths(TAG, update_ref, registered),
        "/oauth/logout": _logout_operations(),
        **account_paths(),
        **oversight_paths(),
        **school_policy_paths(),
        **security_paths(),
        **passkey_paths(),
        **people_paths(),
        "/oauth/authorize": {
            "post": {
                "operationId": "authorize_post",
                "summary": "Authorization endpoint, form-encoded (OIDC Core §3.1.2.1)",
                "tags": [TAG],
                "security": [{}],
                "description": "The same as GET /oauth/authorize with the parameters in a form body.",
                "requestBody": _form("The authorization request", form_params, form_required),
                "responses": see_other,
            },
            "get": {
                "operationId": "authorize",
                "summary": "Authorization endpoint: the user signs in and approves",
                "tags": [TAG],
                "security": [{}],
                "description": "Open this in the user's browser. PKCE with S256 is required of every client. Errors "
                "after the client and redirect URI are verified go back to the redirect URI.",
                "parameters": authorize_params,
                "responses": see_other,
            },
        },
        **_token_paths(token_ref, ref, components),
        "/api/oauth/userinfo": {
            "get": userinfo,
            "post": {
                **userinfo,
                "operationId": "userinfo_post",
                "summary": "Claims about the signed-in user, by POST",
                "description": userinfo["description"] + " The same as GET (OIDC Core §5.3.1).",
            },
        },
        "/api/oauth/jwks": {
            "get": {
                "operationId": "jwks",
                "summary": "The public signing keys",
                "tags": [TAG],
                "security": [{}],
                "description": "The keys that verify access tokens and ID tokens (the `jwks_uri`). Cached for five "
                "minutes; answers 304 to a matching `If-None-Match`.",
                "responses": {
                    "200": json_body(ref["JWKS"], "The key set", _JWKS_EXAMPLE),
                    "304": {"description": "Not modified (If-None-Match matched the ETag)"},
                    **error_responses(
                        413,
                        descriptions={
                            413: "Refused at the gateway: the request carried a body "
                            "over its size limit (a GET needs none)"
                        },
                    ),
                },
            }
        },
    }
    tags = [
        tag(
            TAG,
            "The OAuth 2.0 / OpenID Connect authorization server: registration, authorization, "
            "tokens, revocation, introspection, UserInfo and keys.",
        )
    ]
    description = (
        "The authorization server: dynamic registration of loopback clients, the authorization code "
        "flow with PKCE, refresh-token rotation, revocation, introspection and UserInfo."
    )
    return document("Course School authorization server", base_url, paths, components, tags, description)
