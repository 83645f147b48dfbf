"""Pieces of the OpenAPI 3.1 documents every service describes itself with, and the
merge the discovery service makes of them. Each service builds its document from the
same declarations that drive its routes, so the two cannot drift apart."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from .scopes import SCOPES

ERROR_SCHEMA = {
    "type": "object",
    "description": "RFC 6749 §5.2 error shape, used by every endpoint.",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "error_description": {"type": "string"},
        "scope": {"type": "string", "description": "The scope the request needed (insufficient_scope)."},
    },
}

_STATUS_TEXT = {
    400: "Invalid request", 401: "Missing, invalid, expired or revoked credentials", 403: "Not allowed",
    404: "Not found", 405: "Method not allowed", 409: "Conflict with an existing item",
    413: "Too large", 415: "Unsupported media type", 422: "Fails the resource's schema or rules",
    429: "Too many requests", 503: "A backing service is unavailable",
}


def error_responses(*statuses: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status in statuses:
        response: dict[str, Any] = {
            "description": _STATUS_TEXT[status],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        if status in (401, 403):
            response["headers"] = {"WWW-Authenticate": {
                "description": "Bearer challenge with error and resource_metadata (absent for anonymous callers)",
                "schema": {"type": "string"},
            }}
        out[str(status)] = response
    return out


def json_body(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    """A JSON request body or response (the description is required of responses)."""
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def schemas_of(*types: type) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """JSON Schemas of msgspec types, with their definitions as OpenAPI components."""
    refs, components = msgspec.json.schema_components(types, ref_template="#/components/schemas/{name}")
    return list(refs), components


def oauth2_scheme(base_url: str) -> dict[str, Any]:
    return {
        "type": "oauth2",
        "description": "Authorization code with PKCE (S256); see /auth.md.",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": f"{base_url}/oauth/authorize",
                "tokenUrl": f"{base_url}/api/oauth/token",
                "refreshUrl": f"{base_url}/api/oauth/token",
                "scopes": {s.name: s.description for s in SCOPES},
            }
        },
    }


def document(title: str, base_url: str, paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "1.0.0"},
        "servers": [{"url": base_url}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA, **schemas},
            "securitySchemes": {"oauth2": oauth2_scheme(base_url)},
        },
    }


def merge(title: str, description: str, base_url: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One document from several: paths and components united; a clash is a bug."""
    merged = document(title, base_url, {}, {})
    merged["info"]["description"] = description
    for part in parts:
        for path, item in part.get("paths", {}).items():
            if path in merged["paths"]:
                raise ValueError(f"two services describe {path}")
            merged["paths"][path] = copy.deepcopy(item)
        for name, schema in part.get("components", {}).get("schemas", {}).items():
            existing = merged["components"]["schemas"].get(name)
            if existing is not None and existing != schema:
                raise ValueError(f"two services define the schema {name} differently")
            merged["components"]["schemas"][name] = copy.deepcopy(schema)
    return merged
