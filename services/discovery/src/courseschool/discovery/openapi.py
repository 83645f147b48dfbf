"""`/openapi.json`: one OpenAPI 3.1 document merged from the services' own, plus the
discovery service's paths."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import json_body, merge

_JSON_DOC = {"type": "object"}


def discovery_paths() -> dict[str, Any]:
    def doc(operation_id: str, summary: str, content_type: str = "application/json") -> dict[str, Any]:
        schema = _JSON_DOC if content_type == "application/json" else {"type": "string"}
        return {"get": {
            "operationId": operation_id, "summary": summary, "tags": ["discovery"], "security": [{}],
            "responses": {
                "200": {**json_body(schema, "The document"), "content": {content_type: {"schema": schema}}},
                "304": {"description": "Not modified (If-None-Match matched the ETag)"},
                "503": {"description": "Not available yet", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"}}}},
            },
        }}

    return {"paths": {
        "/.well-known/oauth-authorization-server": doc("as_metadata", "Authorization Server Metadata (RFC 8414)"),
        "/.well-known/openid-configuration": doc("openid_configuration", "OpenID Provider Metadata"),
        "/.well-known/oauth-protected-resource": doc("resource_metadata", "Protected Resource Metadata (RFC 9728)"),
        "/openapi.json": doc("openapi", "This document"),
        "/auth.md": doc("walkthrough", "The authentication walkthrough", "text/markdown"),
    }}


def merged_openapi(base_url: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return merge(
        "Course School API",
        "The course-school platform: OAuth 2.0 / OpenID Connect authorization server and the resource API. "
        f"Start at {base_url}/auth.md.",
        base_url,
        [*parts, discovery_paths()],
    )
