"""The authorization server's schemas and examples: client metadata, the registration,
token, introspection and UserInfo answers, the JWKS; form bodies."""

from __future__ import annotations

import copy
from typing import Any

from ..protocol.registration import AUTH_METHODS, GRANT_TYPES, MAX_REDIRECT_URIS

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
        "client_uri": (
            "The app's home page (an https URL); the consent page shows it as the app's own claim.",
            "https://agent.example/",
        ),
        "policy_uri": (
            "The app's privacy policy (an https URL), shown like `client_uri`.",
            "https://agent.example/privacy",
        ),
        "tos_uri": (
            "The app's terms of service (an https URL), shown like `client_uri`.",
            "https://agent.example/terms",
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
        "client_uri": _s("The app's home page, as registered; absent when none was given.", "https://agent.example/"),
        "policy_uri": _s("Its privacy policy, as registered.", "https://agent.example/privacy"),
        "tos_uri": _s("Its terms of service, as registered.", "https://agent.example/terms"),
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
