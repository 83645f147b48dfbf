"""Pieces of the OpenAPI 3.1 documents every service describes itself with (the ways
to authenticate are `openapi_security.py`; the discovery service merges the documents).
Each service builds its document from the same declarations that drive its routes, so
the two cannot drift apart.

Rules every document follows (the test suite lints the merged one with Redocly's and
Spectral's recommended rulesets and compiles a generated TypeScript client against it):
every operation has an operationId, summary, description, tags and an example for each
body it sends or answers; every error response is the `Error` schema with an example;
every schema property is described. Defaults are stated in the property's description,
not as `default`: generators read `default` on a named schema as "always present"
(openapi-typescript makes such a field required), which a request field with a default
is not.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec

from .dpop import ALGORITHMS as DPOP_ALGORITHMS
from .openapi_security import security_schemes

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Error",
    "description": "The error shape of every endpoint (RFC 6749 §5.2; RFC 6750 §3 for bearer tokens). "
    "It never holds a stack trace or a secret.",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "string",
            "description": "A machine-readable code: an OAuth one (`invalid_request`, `invalid_client`, "
            "`invalid_grant`, `invalid_scope`, `invalid_target`, `unsupported_grant_type`, "
            "`invalid_redirect_uri`, `invalid_client_metadata`, `invalid_token`, "
            "`insufficient_scope`) or one of this platform's (`access_denied`, `not_found`, "
            "`method_not_allowed`, `conflict`, `validation_failed`, `request_too_large`, "
            "`unsupported_media_type`, `too_many_requests`, `temporarily_unavailable`).",
            "examples": ["invalid_request"],
        },
        "error_description": {
            "type": "string",
            "description": "What went wrong, in English, for the developer; the wording may change.",
            "examples": ["the cursor is not one this API handed out"],
        },
        "scope": {
            "type": "string",
            "description": "With `insufficient_scope` only: the scope the request needed (RFC 6750 §3.1).",
            "examples": ["courses:write"],
        },
    },
}

_ERRORS: dict[int, tuple[str, dict[str, str]]] = {
    400: (
        "The request is malformed: a missing or repeated parameter, a body that is not what the operation takes",
        {"error": "invalid_request", "error_description": "the request body is not valid JSON"},
    ),
    401: (
        "No valid credentials: the access token is missing, malformed, expired, revoked or for another audience",
        {"error": "invalid_token", "error_description": "the access token has expired"},
    ),
    403: (
        "The credentials do not allow this: the token lacks the scope named in `scope`, or an anonymous "
        "caller asked for more than the public catalogue",
        {
            "error": "insufficient_scope",
            "error_description": "this request needs the courses:write scope",
            "scope": "courses:write",
        },
    ),
    404: (
        "No such item in the caller's school (other schools' data does not exist for a token)",
        {"error": "not_found", "error_description": "no such courses item"},
    ),
    409: (
        "Another item of the school already holds the value of a field that must be unique",
        {"error": "conflict", "error_description": "another courses item already has this slug"},
    ),
    413: (
        "The request body is larger than the limit",
        {"error": "request_too_large", "error_description": "the request body is too large"},
    ),
    415: (
        "The body's media type is not one the operation takes",
        {
            "error": "unsupported_media_type",
            "error_description": "send the file as multipart/form-data in a field named 'file'",
        },
    ),
    422: (
        "The body is well-formed JSON but breaks the resource's schema or a rule across fields",
        {"error": "validation_failed", "error_description": "Expected `str` of length >= 1 - at `$.title`"},
    ),
    429: (
        "Too many requests from this address or client; wait for `Retry-After` seconds",
        {"error": "too_many_requests", "error_description": "too many requests; try again later"},
    ),
    503: (
        "A backing service (the database or Redis) is unavailable; retry after `Retry-After` seconds",
        {
            "error": "temporarily_unavailable",
            "error_description": "a backing service is unavailable; try again shortly",
        },
    ),
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 0},
        "example": 1,
    }
}
_CHALLENGE = {
    "WWW-Authenticate": {
        "description": "The RFC 6750 §3 bearer challenge with `error` and the RFC 9728 `resource_metadata` URL, "
        "and the RFC 9449 §7.1 DPoP challenge with the proof algorithms (`algs`); the error goes in the "
        "challenge of the scheme the request used. Absent when the caller sent no token.",
        "schema": {"type": "string"},
        "example": 'Bearer error="invalid_token", error_description="the access token has expired", '
        'resource_metadata="https://school.example/.well-known/oauth-protected-resource", '
        f'DPoP algs="{" ".join(DPOP_ALGORITHMS)}", '
        'resource_metadata="https://school.example/.well-known/oauth-protected-resource"',
    }
}


def error_responses(
    *statuses: int,
    examples: dict[int, dict[str, str]] | None = None,
    descriptions: dict[int, str] | None = None,
    challenge: bool = True,
) -> dict[str, Any]:
    """Error responses in the `Error` shape, each with an example. `examples` and
    `descriptions` override the generic ones where an operation knows better;
    `challenge` says whether 401 and 403 carry a bearer `WWW-Authenticate`."""
    out: dict[str, Any] = {}
    for status in statuses:
        description, example = _ERRORS[status]
        response: dict[str, Any] = {
            "description": (descriptions or {}).get(status, description),
            "content": {
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"},
                    "example": (examples or {}).get(status, example),
                }
            },
        }
        if status in (401, 403) and challenge:
            response["headers"] = _CHALLENGE
        if status in (429, 503):
            response["headers"] = _RETRY_AFTER
        out[str(status)] = response
    return out


def unexpected_response() -> dict[str, Any]:
    """`default`: a failure the operation does not otherwise describe (a 5xx)."""
    return {
        "default": {
            "description": "An unexpected failure on the server's side (5xx), in the `Error` shape",
            "content": {
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"},
                    "example": {
                        "error": "server_error",
                        "error_description": "the server could not complete the request",
                    },
                }
            },
        }
    }


def json_body(schema: dict[str, Any], description: str, example: Any) -> dict[str, Any]:
    """A JSON request body or response with its example (responses need the description)."""
    return {"description": description, "content": {"application/json": {"schema": schema, "example": example}}}


def schemas_of(*types: type) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """JSON Schemas of msgspec types, with their definitions as OpenAPI components."""
    refs, components = msgspec.json.schema_components(types, ref_template="#/components/schemas/{name}")
    return list(refs), components


def defaults_described(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every property's `default` moved into its description (see the
    module's docstring for why), and string enums typed; nested inline schemas too."""
    out = copy.deepcopy(schema)
    for prop in out.get("properties", {}).values():
        if "enum" in prop and "type" not in prop and all(isinstance(v, str) for v in prop["enum"]):
            prop["type"] = "string"  # msgspec leaves a Literal's type out; generators then type it `unknown`
        if "default" in prop:
            value = prop.pop("default")
            prop["description"] = (prop.get("description", "") + f" Default: `{json.dumps(value)}`.").strip()
        for key in ("items", "additionalProperties"):
            if isinstance(prop.get(key), dict):
                prop[key] = defaults_described(prop[key])
    return out


def example_of(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """An example value composed from the `examples` of the schema's properties
    (following `$ref`s, arrays and nullable unions). Raises KeyError for a property
    with no example anywhere below it: every field must have one."""
    if "examples" in schema:
        return schema["examples"][0]
    if "$ref" in schema:
        return example_of(components[schema["$ref"].rsplit("/", 1)[1]], components)
    if "anyOf" in schema:
        branch = next(b for b in schema["anyOf"] if b.get("type") != "null")
        return example_of(branch, components)
    if schema.get("type") == "array":
        return [example_of(schema["items"], components)]
    if "properties" in schema:
        return {name: example_of(prop, components) for name, prop in schema["properties"].items()}
    raise KeyError(f"no example for {schema}")


def tag(name: str, description: str) -> dict[str, str]:
    return {"name": name, "description": description}


def document(
    title: str,
    base_url: str,
    paths: dict[str, Any],
    schemas: dict[str, Any],
    tags: list[dict[str, str]],
    description: str = "",
) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": "1.0.0",
            "description": description or title,
            "contact": {"name": "Course School platform team", "url": f"{base_url}/auth.md"},
            # No licence has been chosen for the platform: the SPDX form for "not an open licence".
            "license": {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
        },
        "servers": [{"url": base_url, "description": "This deployment (the issuer and the resource identifier)"}],
        "tags": tags,
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA, **{n: defaults_described(s) for n, s in schemas.items()}},
            "securitySchemes": security_schemes(base_url),
        },
    }
