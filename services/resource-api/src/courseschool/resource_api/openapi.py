"""The resource API's OpenAPI 3.1 description, made from the area declarations that
also make its routes: every path, its scope, its schemas and its errors."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import document, error_responses, json_body, schemas_of

from .areas.registry import AREA_SPECS, AreaSpec, patch_type

API = "/api/v1"
_ITEM_FIELDS = {
    "id": {"type": "string", "format": "uuid"},
    "school_id": {"type": "string", "format": "uuid"},
    "created_at": {"type": "string", "format": "date-time"},
    "updated_at": {"type": "string", "format": "date-time"},
}


def _security(scope: str, public: bool = False) -> list[dict[str, list[str]]]:
    # An empty requirement: the operation also answers anonymous callers.
    return [{"oauth2": [scope]}, {}] if public else [{"oauth2": [scope]}]


def _param(name: str, schema: dict[str, Any], description: str, where: str = "query", required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required, "description": description, "schema": schema}


_ITEM_ID = _param("item_id", {"type": "string"}, "The item's id.", "path", True)


def _list_params(spec: AreaSpec) -> list[dict[str, Any]]:
    params = [
        _param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "Page size (default 20)."),
        _param("cursor", {"type": "string"}, "The next_cursor of the previous page."),
        _param("updated_since", {"type": "string"}, "Only items changed since this RFC 3339 time or date."),
    ]
    if spec.has_published:
        params.append(_param("published", {"type": "string", "enum": ["true", "false"]}, "Filter on publication."))
    if spec.public:
        params.append(_param("school", {"type": "string"}, "The school's slug or id (anonymous catalogue)."))
    return params


def _collection(spec: AreaSpec, item: dict[str, Any], model: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    name = spec.path
    page = {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": item}, "next_cursor": {"type": ["string", "null"]}},
    }
    read_errors = error_responses(400, 401, 403, 404, 503)  # 404: an unknown school in the catalogue filter
    collection: dict[str, Any] = {"get": {
        "operationId": f"list_{spec.name}", "summary": f"List {name}", "description": spec.description,
        "tags": [name], "security": _security(spec.read_scope, spec.public), "parameters": _list_params(spec),
        "responses": {"200": json_body(page, "A page of items"), **read_errors},
    }}
    one: dict[str, Any] = {"parameters": [_ITEM_ID], "get": {
        "operationId": f"get_{spec.name}", "summary": f"Get one of {name}", "tags": [name],
        "security": _security(spec.read_scope, spec.public),
        "responses": {"200": json_body(item, "The item"), **error_responses(401, 403, 404, 503)},
    }}
    if spec.writable:
        write_errors = error_responses(400, 401, 403, 409, 422, 503)
        collection["post"] = {
            "operationId": f"create_{spec.name}", "summary": f"Create one of {name}", "tags": [name],
            "security": _security(spec.write_scope), "requestBody": {**json_body(model), "required": True},
            "responses": {"201": json_body(item, "Created"), **write_errors},
        }
        one["patch"] = {
            "operationId": f"update_{spec.name}", "summary": f"Change one of {name}", "tags": [name],
            "security": _security(spec.write_scope), "requestBody": {**json_body(patch), "required": True},
            "responses": {"200": json_body(item, "Changed"), **write_errors, **error_responses(404)},
        }
        one["delete"] = {
            "operationId": f"delete_{spec.name}", "summary": f"Delete one of {name}", "tags": [name],
            "security": _security(spec.write_scope),
            "responses": {"204": {"description": "Deleted"}, **error_responses(401, 403, 404, 503)},
        }
    return {f"{API}/{name}": collection, f"{API}/{name}/{{item_id}}": one}


def _stored(components: dict[str, Any], model: dict[str, Any], extra: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The schema of a stored document: the model's fields plus those the API adds.
    (The model itself forbids unknown fields, so `allOf` with it cannot describe it.)"""
    name = model["$ref"].rsplit("/", 1)[1]
    base = components[name]
    components[name + suffix] = {
        "type": "object", "title": name + suffix,
        "properties": {**base["properties"], **extra},
        "required": [*base.get("required", []), *extra],
    }
    return {"$ref": f"#/components/schemas/{name}{suffix}"}


def _singleton(spec: AreaSpec, body: dict[str, Any], model: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    ops: dict[str, Any] = {"get": {
        "operationId": f"get_{spec.name}", "summary": f"Get the {spec.path}", "description": spec.description,
        "tags": [spec.path], "security": _security(spec.read_scope),
        "responses": {"200": json_body(body), **error_responses(401, 403, 404, 503)},
    }}
    if spec.writable:
        ops["patch"] = {
            "operationId": f"update_{spec.name}", "summary": f"Change the {spec.path}", "tags": [spec.path],
            "security": _security(spec.write_scope), "requestBody": {**json_body(patch), "required": True},
            "responses": {"200": json_body(body), **error_responses(400, 401, 403, 422, 503)},
        }
    return {f"{API}/{spec.path}": ops}


_FIGURES = {
    "type": "object",
    "required": ["period", "totals", "new_students", "orders_paid", "revenue", "enrolments_per_course"],
    "properties": {
        "period": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}},
        "totals": {"type": "object", "additionalProperties": {"type": "integer"}},
        "new_students": {"type": "integer"},
        "orders_paid": {"type": "integer"},
        "revenue": {"type": "array", "items": {"type": "object", "properties": {
            "currency": {"type": "string"}, "amount": {"type": "integer"}, "orders": {"type": "integer"}}}},
        "enrolments_per_course": {"type": "array", "items": {"type": "object", "properties": {
            "course_id": {"type": "string"}, "enrolments": {"type": "integer"}}}},
    },
}
_FILE = {
    "type": "object", "required": ["id", "url", "filename", "content_type", "size", "created_at"],
    "properties": {
        "id": {"type": "string"}, "url": {"type": "string", "format": "uri"}, "filename": {"type": "string"},
        "content_type": {"type": "string"}, "size": {"type": "integer"}, "created_at": {"type": "string"},
    },
}


def _analytics(spec: AreaSpec) -> dict[str, Any]:
    return {f"{API}/{spec.path}": {"get": {
        "operationId": "get_analytics", "summary": "Figures of the school over a period (default: 30 days)",
        "tags": [spec.path], "security": _security(spec.read_scope),
        "parameters": [
            _param("from", {"type": "string"}, "Start, RFC 3339 time or date."),
            _param("to", {"type": "string"}, "End (exclusive), RFC 3339 time or date."),
        ],
        "responses": {"200": json_body(_FIGURES), **error_responses(400, 401, 403, 503)},
    }}}


def _storage(spec: AreaSpec) -> dict[str, Any]:
    upload_body = {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary"}},
    }}}}
    return {
        f"{API}/{spec.path}": {"post": {
            "operationId": "upload_file", "summary": "Upload a file (images, PDF, text; at most 5 MB)",
            "tags": [spec.path], "security": _security(spec.write_scope), "requestBody": upload_body,
            "responses": {"201": json_body(_FILE, "Stored; `url` is stable"),
                          **error_responses(400, 401, 403, 413, 415, 503)},
        }},
        f"{API}/{spec.path}/{{file_id}}": {"get": {
            "operationId": "download_file", "summary": "Download a stored file by its stable URL",
            "tags": [spec.path], "security": [{}],
            "parameters": [_param("file_id", {"type": "string"}, "The file's id.", "path", True)],
            "responses": {"200": {"description": "The file", "content": {"*/*": {"schema": {
                "type": "string", "format": "binary"}}}}, **error_responses(404)},
        }},
    }


def resource_openapi(base_url: str, title: str) -> dict[str, Any]:
    modelled = [s for s in AREA_SPECS if s.model is not None]
    refs, components = schemas_of(*(s.model for s in modelled), *(patch_type(s.model) for s in modelled))
    models = dict(zip((s.name for s in modelled), refs[: len(modelled)]))
    patches = dict(zip((s.name for s in modelled), refs[len(modelled):]))
    paths: dict[str, Any] = {}
    for spec in AREA_SPECS:
        if spec.kind == "collection":
            item = _stored(components, models[spec.name], _ITEM_FIELDS, "Record")
            paths.update(_collection(spec, item, models[spec.name], patches[spec.name]))
        elif spec.kind == "singleton":
            body = _stored(components, models[spec.name], {"updated_at": _ITEM_FIELDS["updated_at"]}, "Settings")
            paths.update(_singleton(spec, body, models[spec.name], patches[spec.name]))
        elif spec.kind == "computed":
            paths.update(_analytics(spec))
        else:
            paths.update(_storage(spec))
    return document(title, base_url, paths, components)
