"""The authorization server's OpenAPI 3.1 description: registration (RFC 7591),
authorization (RFC 6749 §4.1.1), token (§4.1.3, §6), revocation (RFC 7009),
introspection (RFC 7662), UserInfo (OIDC Core §5.3) and the JWKS."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import document, error_responses, json_body, schemas_of

from .protocol.models import TokenResponse
from .protocol.registration import AUTH_METHODS, GRANT_TYPES, ClientMetadata


def _form(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "properties": properties, "required": required,
    }}}}


_STR = {"type": "string"}
_CLIENT_AUTH = {
    "client_id": {**_STR, "description": "Every client names itself."},
    "client_secret": {**_STR, "description": "Confidential clients only (client_secret_post)."},
}
_TOKEN_FORM = {
    "grant_type": {"type": "string", "enum": list(GRANT_TYPES)},
    "code": {**_STR, "description": "authorization_code: the code from the redirect."},
    "redirect_uri": {**_STR, "description": "authorization_code: the same redirect_uri as at /oauth/authorize."},
    "code_verifier": {**_STR, "description": "authorization_code: the PKCE verifier (43-128 characters)."},
    "refresh_token": {**_STR, "description": "refresh_token: the latest refresh token; it is rotated."},
    "scope": {**_STR, "description": "refresh_token: a narrower scope (optional)."},
    "resource": {**_STR, "description": "RFC 8707 resource indicator (optional)."},
    **_CLIENT_AUTH,
}
_REGISTERED = {
    "type": "object", "required": ["client_id", "client_id_issued_at", "redirect_uris", "token_endpoint_auth_method"],
    "properties": {
        "client_id": _STR, "client_id_issued_at": {"type": "integer"}, "client_name": _STR,
        "redirect_uris": {"type": "array", "items": _STR}, "token_endpoint_auth_method": {"enum": list(AUTH_METHODS)},
        "grant_types": {"type": "array", "items": _STR}, "response_types": {"type": "array", "items": _STR},
        "application_type": _STR, "scope": _STR, "id_token_signed_response_alg": _STR,
        "client_secret": {**_STR, "description": "client_secret_post clients only; shown once."},
        "client_secret_expires_at": {"type": "integer", "description": "0: does not expire."},
    },
}
_INTROSPECTION = {
    "type": "object", "required": ["active"],
    "properties": {
        "active": {"type": "boolean"}, "scope": _STR, "client_id": _STR, "sub": _STR, "aud": _STR, "iss": _STR,
        "exp": {"type": "integer"}, "iat": {"type": "integer"}, "nbf": {"type": "integer"}, "jti": _STR,
        "token_type": _STR, "school_id": _STR, "grant_id": _STR, "auth_time": {"type": "integer"},
    },
}
_USERINFO = {
    "type": "object", "required": ["sub"],
    "properties": {"sub": _STR, "name": _STR, "preferred_username": _STR, "email": _STR,
                   "email_verified": {"type": "boolean"}},
}
_JWKS = {"type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": {
    "type": "object", "required": ["kty", "kid"], "properties": {"kty": _STR, "kid": _STR, "alg": _STR, "use": _STR},
}}}}


def _query(name: str, description: str, required: bool = False, enum: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **({"enum": enum} if enum else {})}
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


def authz_openapi(base_url: str) -> dict[str, Any]:
    (metadata_ref, token_ref), components = schemas_of(ClientMetadata, TokenResponse)
    no_store = {"Cache-Control": {"schema": {"type": "string", "const": "no-store"}}}
    userinfo = {
        "operationId": "userinfo", "summary": "Claims about the signed-in user (OIDC Core §5.3)", "tags": ["oauth"],
        "security": [{"oauth2": ["openid"]}],
        "responses": {"200": json_body(_USERINFO), **error_responses(401, 403, 503)},
    }
    paths = {
        "/api/oauth/register": {"post": {
            "operationId": "register_client", "summary": "Dynamic client registration (RFC 7591)", "tags": ["oauth"],
            "description": "Open to native clients with loopback redirect URIs (http://127.0.0.1:<port>/...).",
            "security": [{}], "requestBody": {**json_body(metadata_ref), "required": True},
            "responses": {"201": json_body(_REGISTERED, "Registered"), **error_responses(400, 413, 429, 503)},
        }},
        "/oauth/authorize": {"post": {
            "operationId": "authorize_post", "summary": "Authorization endpoint, form-encoded (OIDC Core §3.1.2.1)",
            "tags": ["oauth"], "security": [{}],
            "requestBody": _form({"response_type": _STR, "client_id": _STR, "redirect_uri": _STR, "scope": _STR,
                                  "code_challenge": _STR, "code_challenge_method": _STR, "state": _STR},
                                 ["response_type", "client_id", "redirect_uri", "scope", "code_challenge",
                                  "code_challenge_method"]),
            "responses": {"303": {"description": "As for GET", "headers": {"Location": {"schema": {"type": "string"}}}},
                          "400": {"description": "Unknown client or redirect URI: an error page",
                                  "content": {"text/html": {"schema": {"type": "string"}}}}},
        }, "get": {
            "operationId": "authorize", "summary": "Authorization endpoint: the user signs in and approves",
            "tags": ["oauth"], "security": [{}],
            "parameters": [
                _query("response_type", "Always code.", True, ["code"]),
                _query("client_id", "From registration.", True),
                _query("redirect_uri", "A registered redirect URI (a loopback port may differ).", True),
                _query("scope", "Space-separated scopes.", True),
                _query("code_challenge", "PKCE S256 challenge of the code_verifier.", True),
                _query("code_challenge_method", "Always S256.", True, ["S256"]),
                _query("state", "Opaque value echoed on the redirect."),
                _query("nonce", "Echoed in the ID token."),
                _query("resource", "RFC 8707 resource indicator; the API is " + base_url),
                _query("prompt", "none, login, consent or select_account."),
                _query("max_age", "Seconds since the last sign-in beyond which the user signs in again."),
                _query("login_hint", "Pre-fills the email field."),
            ],
            "responses": {
                "303": {"description": "To the sign-in page; finally to redirect_uri with code, state and iss "
                                       "(or error, state and iss)",
                        "headers": {"Location": {"schema": {"type": "string"}}}},
                "400": {"description": "Unknown client or redirect URI: an error page, never a redirect",
                        "content": {"text/html": {"schema": {"type": "string"}}}},
            },
        }},
        "/api/oauth/token": {"post": {
            "operationId": "token", "summary": "Token endpoint: authorization_code and refresh_token grants",
            "tags": ["oauth"], "security": [{}], "requestBody": _form(_TOKEN_FORM, ["grant_type", "client_id"]),
            "responses": {"200": {**json_body(token_ref, "Tokens"), "headers": no_store},
                          **error_responses(400, 401, 429, 503)},
        }},
        "/api/oauth/revoke": {"post": {
            "operationId": "revoke", "summary": "Token revocation (RFC 7009); a refresh token ends its grant",
            "tags": ["oauth"], "security": [{}],
            "requestBody": _form({"token": _STR, "token_type_hint": {"enum": ["access_token", "refresh_token"]},
                                  **_CLIENT_AUTH}, ["token", "client_id"]),
            "responses": {"200": {"description": "Revoked, or nothing to revoke"}, **error_responses(400, 401, 429, 503)},
        }},
        "/api/oauth/introspect": {"post": {
            "operationId": "introspect", "summary": "Token introspection (RFC 7662), for confidential clients",
            "tags": ["oauth"], "security": [{}],
            "requestBody": _form({"token": _STR, "token_type_hint": _STR, **_CLIENT_AUTH},
                                 ["token", "client_id", "client_secret"]),
            "responses": {"200": {**json_body(_INTROSPECTION), "headers": no_store},
                          **error_responses(400, 401, 429, 503)},
        }},
        "/api/oauth/userinfo": {"get": userinfo, "post": {**userinfo, "operationId": "userinfo_post"}},
        "/api/oauth/jwks": {"get": {
            "operationId": "jwks", "summary": "The public signing keys", "tags": ["oauth"], "security": [{}],
            "responses": {"200": json_body(_JWKS)},
        }},
    }
    return document("Course School authorization server", base_url, paths, components)
