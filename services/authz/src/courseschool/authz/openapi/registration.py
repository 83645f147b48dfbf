"""The OpenAPI description of the client configuration endpoint (RFC 7592): a
self-registered client reads, replaces or deletes its registration with the
`registration_access_token` its registration answered."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, json_body

_TOKEN_401 = {
    401: {"error": "invalid_token", "error_description": "the registration access token is not valid for this client"}
}
_DESCRIBED_401 = {
    401: "The registration access token is missing or wrong, or the client does not exist (`invalid_token`, "
    "with `WWW-Authenticate: Bearer`)"
}


def configuration_paths(tag: str, update_ref: dict[str, Any], registered: dict[str, Any]) -> dict[str, Any]:
    """`update_ref`: the ClientUpdate schema; `registered`: (ref, example) of the
    RegisteredClient answer."""
    ref, example = registered["ref"], registered["example"]
    configured = {
        **example,
        "registration_access_token": "Zr3v1X0nQ8yWm2KcT5uB7pD9sH4aLq6e",
        "registration_client_uri": "https://school.example/api/oauth/register/hT3kq9XbV2mPz8Lr4sWd1Q",
    }
    client_id = {
        "name": "client_id",
        "in": "path",
        "required": True,
        "description": "The client's id, as in `registration_client_uri`.",
        "schema": {"type": "string"},
        "example": example["client_id"],
    }
    common = {"tags": [tag], "security": [{"registration": []}], "parameters": [client_id]}
    current = {**json_body(ref, "The client's current registration (its secret is never shown again)", configured)}
    return {
        "/api/oauth/register/{client_id}": {
            "get": {
                **common,
                "operationId": "read_client_registration",
                "summary": "Read the client's registration (RFC 7592 §2.1)",
                "description": "The metadata as registered, with the registration access token and this URI.",
                "responses": {
                    "200": current,
                    **error_responses(401, 429, 503, challenge=False, examples=_TOKEN_401, descriptions=_DESCRIBED_401),
                },
            },
            "put": {
                **common,
                "operationId": "update_client_registration",
                "summary": "Replace the client's registration (RFC 7592 §2.2)",
                "description": "Send the whole metadata again with `client_id` (fields left out take their "
                "defaults); checked as at registration. A public client stays public.",
                "requestBody": {
                    **json_body(
                        update_ref,
                        "The client's new metadata, with its client_id",
                        {
                            "client_id": example["client_id"],
                            "client_name": "My CLI 2",
                            "redirect_uris": example["redirect_uris"],
                        },
                    ),
                    "required": True,
                },
                "responses": {
                    "200": {**current, "description": "Replaced: the registration as it now is"},
                    **error_responses(
                        400,
                        401,
                        413,
                        429,
                        503,
                        challenge=False,
                        examples={
                            400: {"error": "invalid_client_metadata", "error_description": "client_id must be present"},
                            **_TOKEN_401,
                        },
                        descriptions={
                            400: "The metadata is refused (`invalid_redirect_uri`, `invalid_client_metadata`); "
                            "nothing changes",
                            **_DESCRIBED_401,
                        },
                    ),
                },
            },
            "delete": {
                **common,
                "operationId": "delete_client_registration",
                "summary": "Delete the client (RFC 7592 §2.3)",
                "description": "The client is removed and every grant it holds ends at once (refresh and access "
                "tokens); the client_id is then unknown (`invalid_client`) everywhere.",
                "responses": {
                    "204": {"description": "Deleted"},
                    **error_responses(401, 429, 503, challenge=False, examples=_TOKEN_401, descriptions=_DESCRIBED_401),
                },
            },
        }
    }
