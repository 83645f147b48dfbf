"""The authorization server's OpenAPI 3.1 description: registration (RFC 7591),
authorization (RFC 6749 §4.1.1), token (§4.1.3, §6), revocation (RFC 7009),
introspection (RFC 7662), UserInfo (OIDC Core §5.3) and the JWKS."""

from __future__ import annotations

import copy
from typing import Any

from courseschool.common.openapi import (
    DPOP_HEADER,
    DPOP_NONCE_HEADER,
    document,
    error_responses,
    example_of,
    json_body,
    schemas_of,
    tag,
    unexpected_response,
)

from .openapi_account import account_paths
from .openapi_registration import configuration_paths
from .protocol.models import TokenResponse
from .protocol.registration import AUTH_METHODS, GRANT_TYPES, MAX_REDIRECT_URIS, ClientMetadata, ClientUpdate

TAG = "oauth"
_CALLBACK = "http://127.0.0.1:53682/callback"
_CLIENT_ID = "hT3kq9XbV2mPz8Lr4sWd1Q"
_ACCESS_TOKEN = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl"
_REFRESH_TOKEN = "Qm9vdHN0cmFwLXJlZnJlc2gtdG9rZW4tZXhhbXBsZQ"
_SCOPE = "openid profile courses:read courses:write"


def _s(description: str, example: Any, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A described property with one example (a string unless `schema` says otherwise)."""
    return {**(schema or {"type": "string"}), "description": description, "examples": [example]}


_INT = {"type": "integer"}
_STRINGS = {"type": "array", "items": {"type": "string"}}

# Descriptions and examples of the msgspec-made schemas, by property.
_DOCS: dict[str, dict[str, tuple[str, Any]]] = {
    "ClientMetadata": {
        "redirect_uris": (
            "Where the authorization server may send the user back: `http` URIs on a loopback "
            "host (127.0.0.1, [::1] or localhost), any port, no fragment (RFC 8252 §7.3); "
            "1 to 10 of them.",
            [_CALLBACK],
        ),
        "client_name": (
            "The name the consent page shows (as self-declared); no control characters, and not an integration's name.",
            "My CLI",
        ),
        "application_type": ("`native` for command-line and desktop apps (OIDC Dynamic Registration §2).", "native"),
        "token_endpoint_auth_method": (
            f"How the client authenticates at the token endpoint: "
            f"{', '.join(f'`{m}`' for m in AUTH_METHODS)}; `client_secret_post` and `client_secret_basic` "
            f"get a `client_secret`.",
            "none",
        ),
        "grant_types": (
            f"Grant types the client uses, from {', '.join(f'`{g}`' for g in GRANT_TYPES)}.",
            list(GRANT_TYPES),
        ),
        "response_types": ("Response types the client uses; only `code`.", ["code"]),
        "scope": ("Space-separated scopes the client may ask for; null: any.", _SCOPE),
        "id_token_signed_response_alg": ("Signature algorithm of ID tokens (JWS `alg`).", "RS256"),
        "dpop_bound_access_tokens": (
            "RFC 9449 §5.2: the client always uses DPoP; its token requests without a `DPoP` proof are refused.",
            False,
        ),
    },
    "TokenResponse": {
        "access_token": (
            "The access token (a JWT, RFC 9068); send it as `Authorization: Bearer <token>`.",
            _ACCESS_TOKEN,
        ),
        "token_type": (
            "`Bearer`, or `DPoP` when the request carried a DPoP proof: then send the token as "
            "`Authorization: DPoP <token>` with a proof (RFC 9449).",
            "Bearer",
        ),
        "expires_in": ("Lifetime of the access token in seconds.", 900),
        "scope": ("The scopes granted, space-separated: the user's role may have dropped some asked for.", _SCOPE),
        "refresh_token": ("A new refresh token; the one sent is used up (rotation).", _REFRESH_TOKEN),
        "id_token": (
            "The OpenID Connect ID token (a JWT), when `openid` was granted.",
            "eyJhbGciOiJSUzI1NiIsImtpZCI6InIxIn0.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl",
        ),
    },
}


def _documented(components: dict[str, Any]) -> dict[str, Any]:
    for name, fields in _DOCS.items():
        for prop, (description, example) in fields.items():
            components[name]["properties"][prop].update(description=description, examples=[example])
    # What registration enforces beyond the struct: at least one redirect URI (and at most
    # MAX_REDIRECT_URIS), or 400 invalid_redirect_uri.
    metadata = components["ClientMetadata"]
    metadata["required"] = ["redirect_uris"]
    metadata["properties"]["redirect_uris"] = {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": MAX_REDIRECT_URIS,
        "description": metadata["properties"]["redirect_uris"]["description"],
        "examples": metadata["properties"]["redirect_uris"]["examples"],
    }
    # RFC 7592 §2.2: an update is the metadata again, with the client's id (and secret).
    update = components["ClientUpdate"]
    update["properties"].update(copy.deepcopy(metadata["properties"]))
    update["required"] = ["client_id", "redirect_uris"]
    update["properties"]["client_id"].update(
        description="This client's id: it must be the one of the URI.", examples=[_CLIENT_ID]
    )
    update["properties"]["client_secret"].update(
        description="Optional; when sent, it must be the client's current secret (it never changes here).",
        examples=["wYvQ3d9mV0Jr1kZ6cT8uB5nE2hXaLq7s"],
    )
    # A token response leaves out what it does not carry: no defaults to state.
    for prop in components["TokenResponse"]["properties"].values():
        prop.pop("default", None)
    return components


def _form(
    description: str, properties: dict[str, Any], required: list[str], sent: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A form body; its example holds the required fields and those named in `sent`."""
    schema = {"type": "object", "properties": properties, "required": required}
    example = {k: p["examples"][0] for k, p in properties.items() if k in required or k in sent}
    return {
        "required": True,
        "description": description,
        "content": {"application/x-www-form-urlencoded": {"schema": schema, "example": example}},
    }


_CLIENT_AUTH = {
    "client_id": _s("The client's id, from registration.", _CLIENT_ID),
    "client_secret": _s(
        "`client_secret_post` clients only: the client's secret (`client_secret_basic` clients send it in an "
        "HTTP Basic `Authorization` header instead, RFC 6749 §2.3.1).",
        "wYvQ3d9mV0Jr1kZ6cT8uB5nE2hXaLq7s",
    ),
}
_TOKEN_FORM = {
    "grant_type": _s(
        "`authorization_code` or `refresh_token`.", "authorization_code", {"type": "string", "enum": list(GRANT_TYPES)}
    ),
    "code": _s("authorization_code: the `code` from the redirect.", "SplxlOBeZQQYbYS6WxSbIA"),
    "redirect_uri": _s("authorization_code: the same `redirect_uri` as at /oauth/authorize.", _CALLBACK),
    "code_verifier": _s(
        "authorization_code: the PKCE verifier (43 to 128 characters).", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    ),
    "refresh_token": _s("refresh_token: the latest refresh token; it is rotated.", _REFRESH_TOKEN),
    "scope": _s("refresh_token: a narrower scope than granted (optional).", "openid courses:read"),
    "resource": _s("RFC 8707 resource indicator (optional): the API the token is for.", "https://school.example"),
    **_CLIENT_AUTH,
}
_REGISTERED = {
    "type": "object",
    "title": "RegisteredClient",
    "description": "The registered metadata (RFC 7591 §3.2.1) with the client's id.",
    "required": [
        "client_id",
        "client_id_issued_at",
        "redirect_uris",
        "token_endpoint_auth_method",
        "grant_types",
        "response_types",
        "application_type",
        "id_token_signed_response_alg",
    ],
    "properties": {
        "client_id": _s("The client's id, chosen by the server.", _CLIENT_ID),
        "client_id_issued_at": _s("When the id was issued (seconds since the Unix epoch).", 1740823200, _INT),
        "client_name": _s("The name as registered; absent when none was given.", "My CLI"),
        "redirect_uris": _s("The registered redirect URIs.", [_CALLBACK], _STRINGS),
        "token_endpoint_auth_method": _s(
            "How the client authenticates at the token endpoint.",
            "none",
            {"type": "string", "enum": list(AUTH_METHODS)},
        ),
        "grant_types": _s("The grant types it may use.", list(GRANT_TYPES), _STRINGS),
        "response_types": _s("The response types it may use.", ["code"], _STRINGS),
        "application_type": _s("`native` or `web`.", "native"),
        "scope": _s("The scopes it may ask for; absent: any.", _SCOPE),
        "id_token_signed_response_alg": _s("Signature algorithm of its ID tokens.", "RS256"),
        "client_secret": _s(
            "Confidential clients (`client_secret_post`, `client_secret_basic`) only: the secret, shown this once.",
            "wYvQ3d9mV0Jr1kZ6cT8uB5nE2hXaLq7s",
        ),
        "client_secret_expires_at": _s("Confidential clients only: 0, the secret does not expire.", 0, _INT),
        "registration_access_token": _s(
            "RFC 7592: the token to read, update or delete this registration at `registration_client_uri`; "
            "keep it like a password.",
            "Zr3v1X0nQ8yWm2KcT5uB7pD9sH4aLq6e",
        ),
        "registration_client_uri": _s(
            "RFC 7592: this client's configuration endpoint.",
            "https://school.example/api/oauth/register/hT3kq9XbV2mPz8Lr4sWd1Q",
        ),
        "dpop_bound_access_tokens": _s(
            "Present (`true`) when the client registered it: every token request needs a DPoP proof.",
            True,
            {"type": "boolean"},
        ),
    },
}
_INTROSPECTION = {
    "type": "object",
    "title": "Introspection",
    "description": 'RFC 7662 §2.2: `{"active": false}` and nothing else for any token that is not active.',
    "required": ["active"],
    "properties": {
        "active": _s("Whether the token is active (issued here, unexpired, unrevoked).", True, {"type": "boolean"}),
        "scope": _s("The token's scopes, space-separated.", _SCOPE),
        "client_id": _s("The client the token was issued to.", _CLIENT_ID),
        "sub": _s("The user the token acts for.", "4d3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a"),
        "aud": _s("The audience: the resource the token is for.", "https://school.example"),
        "iss": _s("The issuer.", "https://school.example"),
        "exp": _s("Expiry (seconds since the Unix epoch).", 1740824100, _INT),
        "iat": _s("Issue time (seconds since the Unix epoch).", 1740823200, _INT),
        "nbf": _s("Not valid before (seconds since the Unix epoch).", 1740823200, _INT),
        "jti": _s("The token's unique id.", "b1c2d3e4f5a6"),
        "token_type": _s(
            "`Bearer` or `DPoP` (a DPoP-bound access token) for access tokens, `refresh_token` for refresh tokens.",
            "Bearer",
        ),
        "cnf": _s(
            "A DPoP-bound access token's confirmation (RFC 9449 §6.2): `jkt`, the thumbprint of its key.",
            {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"},
            {
                "type": "object",
                "properties": {"jkt": {"type": "string", "description": "The SHA-256 JWK thumbprint, base64url."}},
            },
        ),
        "school_id": _s("Id (UUID) of the school the token acts for.", "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f"),
        "grant_id": _s("The grant (the user's approval) the token belongs to.", "g-7f6e5d4c"),
        "auth_time": _s("When the user signed in (seconds since the Unix epoch).", 1740823100, _INT),
    },
}
_USERINFO = {
    "type": "object",
    "title": "UserInfo",
    "description": "`sub` plus the claims the granted scopes allow (OIDC Core §5.4).",
    "required": ["sub"],
    "properties": {
        "sub": _s("The user's stable id.", "4d3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a"),
        "name": _s("Full name (scope `profile`).", "Ada Lovelace"),
        "preferred_username": _s("Short name (scope `profile`).", "ada"),
        "email": _s("Email address (scope `email`).", "ada@example.com"),
        "email_verified": _s("Whether the school verified the address (scope `email`).", True, {"type": "boolean"}),
    },
}
_JWK = {
    "type": "object",
    "description": "One public key (RFC 7517 §4).",
    "required": ["kty", "kid"],
    "properties": {
        "kty": _s("Key type: `RSA` or `EC`.", "EC"),
        "kid": _s("Key id, named in the tokens' JWS header.", "k1"),
        "alg": _s("The algorithm the key signs with.", "ES256"),
        "use": _s("Always `sig`.", "sig"),
    },
    "additionalProperties": {"description": "The key's public parameters (`n`, `e`; `crv`, `x`, `y`)."},
}
_JWKS = {
    "type": "object",
    "title": "JWKS",
    "description": "The public signing keys (RFC 7517 §5).",
    "required": ["keys"],
    "properties": {"keys": {"type": "array", "items": _JWK, "description": "Current and recently rotated keys."}},
}
_JWKS_EXAMPLE = {
    "keys": [
        {
            "kty": "EC",
            "kid": "k1",
            "alg": "ES256",
            "use": "sig",
            "crv": "P-256",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        }
    ]
}

_NO_STORE = {
    "Cache-Control": {
        "description": "Always `no-store`: the body holds credentials.",
        "schema": {"type": "string", "const": "no-store"},
        "example": "no-store",
    }
}
_LOCATION = {"description": "Where the browser goes next.", "schema": {"type": "string"}}
_ERROR_PAGE = {
    "description": "Unknown client or redirect URI, or a malformed request before the client is "
    "known: an HTML error page, never a redirect",
    "content": {
        "text/html": {
            "schema": {"type": "string"},
            "example": "<!doctype html><html><body><p>This sign-in request cannot be "
            "used: unknown client.</p></body></html>",
        }
    },
}
_BAD_FORM = {
    400: {"error": "invalid_request", "error_description": "the request body must be application/x-www-form-urlencoded"}
}
_BAD_CLIENT = {401: {"error": "invalid_client", "error_description": "client authentication failed"}}
_CLIENT_401 = {401: "The client is unknown or failed to authenticate (`invalid_client`)"}


def _query(
    name: str, description: str, example: str, required: bool = False, enum: list[str] | None = None
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **({"enum": enum} if enum else {})}
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
        "example": example,
    }


_AUTHORIZE_PARAMS = (
    ("response_type", "Always `code`.", "code", True, ["code"]),
    ("client_id", "From registration (or a Client ID Metadata Document URL).", _CLIENT_ID, True, None),
    ("redirect_uri", "A registered redirect URI (a loopback port may differ).", _CALLBACK, True, None),
    ("scope", "Space-separated scopes.", _SCOPE, True, None),
    (
        "code_challenge",
        "PKCE S256 challenge of the code_verifier.",
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        True,
        None,
    ),
    ("code_challenge_method", "Always `S256`.", "S256", True, ["S256"]),
    ("state", "Opaque value echoed on the redirect.", "af0ifjsldkj", False, None),
    ("nonce", "Echoed in the ID token.", "n-0S6_WzA2Mj", False, None),
    (
        "resource",
        "RFC 8707 resource indicator: the API's identifier, the server's origin.",
        "https://school.example",
        False,
        None,
    ),
    ("prompt", "`none`, `login`, `consent` or `select_account`.", "consent", False, None),
    ("max_age", "Seconds since the last sign-in beyond which the user signs in again.", "3600", False, None),
    ("login_hint", "Pre-fills the email field.", "ada@example.com", False, None),
    (
        "dpop_jkt",
        "RFC 9449 §10: the thumbprint (RFC 7638) of the client's DPoP key; the code is then exchanged only with a "
        "proof made with that key.",
        "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I",
        False,
        None,
    ),
)


_LOGOUT_PARAMS = (
    (
        "id_token_hint",
        "An ID token this server issued to the client (expired ones are accepted).",
        "eyJhbGci...",
        False,
        None,
    ),
    ("client_id", "The client, when no id_token_hint is sent.", _CLIENT_ID, False, None),
    (
        "post_logout_redirect_uri",
        "Where to send the browser afterwards: one of the client's redirect URIs (a loopback port may differ).",
        _CALLBACK,
        False,
        None,
    ),
    ("state", "Opaque value echoed on that redirect.", "af0ifjsldkj", False, None),
)


def _logout_operations() -> dict[str, Any]:
    """OpenID Connect RP-Initiated Logout 1.0 §2: the end_session_endpoint."""
    page = {
        "description": "A page: the confirmation, or that the person is signed out",
        "content": {
            "text/html": {
                "schema": {"type": "string"},
                "example": "<!doctype html><html><body><h1>Sign out of Course School?</h1></body></html>",
            }
        },
    }
    back = {
        "description": "Signed out (or not signed in): back to `post_logout_redirect_uri` with `state`",
        "headers": {"Location": {**_LOCATION, "example": f"{_CALLBACK}?state=af0ifjsldkj"}},
    }
    common = {"tags": [TAG], "security": [{}]}
    return {
        "get": {
            **common,
            "operationId": "end_session",
            "summary": "Sign out (OpenID Connect RP-Initiated Logout)",
            "description": "Open this in the user's browser. The person is asked to confirm; the browser then goes "
            "to `post_logout_redirect_uri` (when registered for the client) with `state`. Tokens are not revoked: "
            "revoke them at the revocation endpoint.",
            "parameters": [_query(*p) for p in _LOGOUT_PARAMS],
            "responses": {
                "200": page,
                "303": back,
                "400": _ERROR_PAGE,
                **error_responses(503),
                **unexpected_response(),
            },
        },
        "post": {
            **common,
            "operationId": "end_session_post",
            "summary": "Sign out, form-encoded; with the page's `csrf` field, the confirmation",
            "description": "The same parameters as GET in a form body. The confirmation page posts here with its "
            "`csrf` field, which ends the session.",
            "requestBody": _form("The sign-out request", {name: _s(d, e) for name, d, e, *_ in _LOGOUT_PARAMS}, []),
            "responses": {
                "200": page,
                "303": back,
                "400": _ERROR_PAGE,
                "403": {**_ERROR_PAGE, "description": "A form not sent from the confirmation page: an HTML page"},
                **error_responses(503),
                **unexpected_response(),
            },
        },
    }


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
        "/api/oauth/token": {
            "post": {
                "operationId": "token",
                "summary": "Token endpoint: authorization_code and refresh_token grants",
                "tags": [TAG],
                "security": [{}],
                "description": "Exchanges an authorization code (with its PKCE verifier) or a refresh token for "
                "tokens. A refresh token is rotated: use the new one next time. With a `DPoP` proof the tokens "
                "are bound to its key (RFC 9449).",
                "parameters": [DPOP_HEADER],
                "requestBody": _form(
                    "The token request (RFC 6749 §4.1.3, §6)",
                    _TOKEN_FORM,
                    ["grant_type", "client_id"],
                    ("code", "redirect_uri", "code_verifier"),
                ),
                "responses": {
                    "200": {
                        **json_body(token_ref, "Tokens", example_of(components["TokenResponse"], components)),
                        "headers": {**_NO_STORE, **DPOP_NONCE_HEADER},
                    },
                    **error_responses(
                        400,
                        401,
                        429,
                        503,
                        challenge=False,
                        descriptions={
                            400: "`invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` or "
                            "`unsupported_grant_type` (RFC 6749 §5.2); `invalid_dpop_proof` or `use_dpop_nonce` "
                            "(RFC 9449 §5, §8)",
                            **_CLIENT_401,
                        },
                        examples={
                            400: {
                                "error": "invalid_grant",
                                "error_description": "the authorization code is invalid or used",
                            },
                            **_BAD_CLIENT,
                        },
                    ),
                },
            }
        },
        "/api/oauth/revoke": {
            "post": {
                "operationId": "revoke",
                "summary": "Token revocation (RFC 7009); a refresh token ends its grant",
                "tags": [TAG],
                "security": [{}],
                "description": "Revokes an access or refresh token of the calling client. Answers 200 for any "
                "well-formed request, known token or not.",
                "requestBody": _form(
                    "The token to revoke",
                    {
                        "token": _s("The token to revoke.", _REFRESH_TOKEN),
                        "token_type_hint": _s(
                            "What the token is, if the client knows.",
                            "refresh_token",
                            {"type": "string", "enum": ["access_token", "refresh_token"]},
                        ),
                        **_CLIENT_AUTH,
                    },
                    ["token", "client_id"],
                ),
                "responses": {
                    "200": {"description": "Revoked, or nothing to revoke; no body", "headers": _NO_STORE},
                    **error_responses(
                        400,
                        401,
                        429,
                        503,
                        challenge=False,
                        examples={**_BAD_FORM, **_BAD_CLIENT},
                        descriptions=_CLIENT_401,
                    ),
                },
            }
        },
        "/api/oauth/introspect": {
            "post": {
                "operationId": "introspect",
                "summary": "Token introspection (RFC 7662), for confidential clients",
                "tags": [TAG],
                "security": [{}],
                "description": "For resource servers: only confidential clients an administrator made may use it.",
                "requestBody": _form(
                    "The token to look at, with the caller's credentials",
                    {
                        "token": _s("The token.", _ACCESS_TOKEN),
                        "token_type_hint": _s("`access_token` or `refresh_token`, if known.", "access_token"),
                        **_CLIENT_AUTH,
                    },
                    ["token", "client_id", "client_secret"],
                ),
                "responses": {
                    "200": {
                        **json_body(ref["Introspection"], "What the token is", example_of(_INTROSPECTION, {})),
                        "headers": _NO_STORE,
                    },
                    **error_responses(
                        400,
                        401,
                        429,
                        503,
                        challenge=False,
                        examples={
                            **_BAD_FORM,
                            401: {
                                "error": "invalid_client",
                                "error_description": "introspection is for confidential clients",
                            },
                        },
                        descriptions=_CLIENT_401,
                    ),
                },
            }
        },
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
