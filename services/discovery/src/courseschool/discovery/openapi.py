"""`/openapi.json`: one OpenAPI 3.1 document merged from the services' own, plus the
discovery service's paths."""

from __future__ import annotations

import copy
from typing import Any

from courseschool.common.openapi import document, error_responses, tag

TAG = "discovery"
_METADATA = {
    "type": "object",
    "title": "MetadataDocument",
    "description": "A JSON metadata document; its members are defined by the RFC or specification the operation names.",
    "additionalProperties": {"description": "A member the specification defines."},
}


def _ok(example: Any, content_type: str) -> dict[str, Any]:
    schema = (
        {"$ref": "#/components/schemas/MetadataDocument"}
        if content_type == "application/json"
        else {"type": "string", "description": "The Markdown text."}
    )
    return {
        "description": "The document; `ETag` and `Cache-Control: public, max-age=300` let clients cache it",
        "headers": {
            "ETag": {
                "description": "The document's version, for If-None-Match.",
                "schema": {"type": "string"},
                "example": '"5d41402abc4b2a76"',
            }
        },
        "content": {content_type: {"schema": schema, "example": example}},
    }


def discovery_paths(base_url: str) -> dict[str, Any]:
    def doc(
        operation_id: str, summary: str, description: str, example: Any, content_type: str = "application/json"
    ) -> dict[str, Any]:
        return {
            "get": {
                "operationId": operation_id,
                "summary": summary,
                "description": description,
                "tags": [TAG],
                "security": [{}],
                "responses": {
                    "200": _ok(example, content_type),
                    "304": {"description": "Not modified (If-None-Match matched the ETag)"},
                    **error_responses(
                        413,
                        503,
                        descriptions={
                            413: "Refused at the gateway: the request carried a body over its size limit "
                            "(a GET needs none)",
                            503: "The service the document comes from has not answered yet, "
                            "and no earlier copy is kept",
                        },
                    ),
                },
            }
        }

    return {
        "paths": {
            "/.well-known/oauth-authorization-server": doc(
                "as_metadata",
                "Authorization Server Metadata (RFC 8414)",
                "Every endpoint, grant type, authentication method and scope of the authorization server.",
                {
                    "issuer": base_url,
                    "authorization_endpoint": f"{base_url}/oauth/authorize",
                    "token_endpoint": f"{base_url}/api/oauth/token",
                    "code_challenge_methods_supported": ["S256"],
                },
            ),
            "/.well-known/openid-configuration": doc(
                "openid_configuration",
                "OpenID Provider Metadata",
                "The OpenID Connect Discovery 1.0 document of the same authorization server.",
                {
                    "issuer": base_url,
                    "userinfo_endpoint": f"{base_url}/api/oauth/userinfo",
                    "jwks_uri": f"{base_url}/api/oauth/jwks",
                },
            ),
            "/.well-known/oauth-protected-resource": doc(
                "resource_metadata",
                "Protected Resource Metadata (RFC 9728)",
                "The resource API's identifier, its authorization server and the scopes it understands; where "
                "a client starts.",
                {"resource": base_url, "authorization_servers": [base_url], "bearer_methods_supported": ["header"]},
            ),
            "/openapi.json": doc(
                "openapi",
                "This document",
                "The OpenAPI 3.1 description of every public endpoint, merged from the services' own.",
                {"openapi": "3.1.0", "info": {"title": "Course School API", "version": "1.0.0"}},
            ),
            "/auth.md": doc(
                "walkthrough",
                "The authentication walkthrough",
                "How a command-line tool, desktop app or agent connects, step by step, in Markdown.",
                "# Connecting to Course School\n",
                "text/markdown",
            ),
        },
        "tags": [tag(TAG, "Metadata documents: where clients find the endpoints, keys, scopes and this description.")],
        "components": {"schemas": {"MetadataDocument": _METADATA}},
    }


def merged_openapi(base_url: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return merge(
        "Course School API",
        "The course-school platform: OAuth 2.0 / OpenID Connect authorization server and the resource API. "
        f"Start at {base_url}/auth.md. Amounts are integers in minor units of an ISO 4217 currency (4900 with "
        "EUR is 49.00 EUR).",
        base_url,
        [*parts, discovery_paths(base_url)],
    )


def merge(title: str, description: str, base_url: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One document from several: paths, tags and components united; a clash is a bug."""
    merged = document(title, base_url, {}, {}, [], description)
    tags: dict[str, dict[str, str]] = {}
    for part in parts:
        for path, item in part.get("paths", {}).items():
            if path in merged["paths"]:
                raise ValueError(f"two services describe {path}")
            merged["paths"][path] = copy.deepcopy(item)
        for declared in part.get("tags", []):
            if tags.setdefault(declared["name"], declared) != declared:
                raise ValueError(f"two services declare the tag {declared['name']} differently")
        for name, schema in part.get("components", {}).get("schemas", {}).items():
            existing = merged["components"]["schemas"].get(name)
            if existing is not None and existing != schema:
                raise ValueError(f"two services define the schema {name} differently")
            merged["components"]["schemas"][name] = copy.deepcopy(schema)
    merged["tags"] = [copy.deepcopy(t) for t in tags.values()]
    return merged
