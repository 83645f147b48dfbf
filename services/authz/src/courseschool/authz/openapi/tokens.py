"""The token endpoint (RFC 6749 §3.2), revocation (RFC 7009) and introspection (RFC 7662)."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, example_of, json_body
from courseschool.common.openapi_security import DPOP_HEADER, DPOP_NONCE_HEADER

from .pages import _BAD_CLIENT, _BAD_FORM, _CLIENT_401
from .schemas import _ACCESS_TOKEN, _CLIENT_AUTH, _INTROSPECTION, _NO_STORE, _REFRESH_TOKEN, _TOKEN_FORM, TAG, _form, _s


def _token_paths(token_ref: dict[str, Any], ref: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The token endpoint, revocation and introspection: forms with client authentication."""
    return {
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
    }
