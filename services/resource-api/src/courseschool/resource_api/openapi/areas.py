"""The operations of a collection area and of a singleton area."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, example_of, json_body

from ..areas.registry import AreaSpec
from .parts import _ITEM_FIELDS, _ITEM_ID, API, _list_params, _not_found, _page, _ref, _scope_error, _security


def _public_note(spec: AreaSpec) -> str:
    if not spec.public:
        return ""
    return (
        " Without a token it answers from the public catalogue: published items only, of the school named by `school`."
    )


def _collection(spec: AreaSpec, name: str, components: dict[str, Any]) -> dict[str, Any]:
    path, item = spec.path, example_of(components[name], components)
    page, page_example = _page(name, item)
    anonymous_403 = " (or, without a token, anything beyond the public catalogue)" if spec.public else ""
    collection: dict[str, Any] = {
        "get": {
            "operationId": f"list_{spec.name}",
            "summary": f"List {path}",
            "tags": [path],
            "description": f"{spec.description} A page of the school's {path}, oldest first; follow `next_cursor` "
            f"for the rest. Needs `{spec.read_scope}`.{_public_note(spec)}",
            "security": _security(spec.read_scope, spec.public),
            "parameters": _list_params(spec),
            "responses": {
                "200": json_body(page, "A page of items", page_example),
                **error_responses(
                    400,
                    401,
                    403,
                    404,
                    503,
                    examples={
                        400: {
                            "error": "invalid_request",
                            "error_description": "limit must be an integer from 1 to 100",
                        },
                        404: {"error": "not_found", "error_description": "no such school"},
                        **_scope_error(spec.read_scope),
                    },
                    descriptions={
                        404: "No school has the slug or id given as `school`",
                        403: f"The token lacks `{spec.read_scope}`{anonymous_403}",
                    },
                ),
            },
        }
    }
    one: dict[str, Any] = {
        "parameters": [_ITEM_ID],
        "get": {
            "operationId": f"get_{spec.name}",
            "summary": f"Get one of {path}",
            "tags": [path],
            "description": f"One item of {path} by its id. Needs `{spec.read_scope}`.{_public_note(spec)}",
            "security": _security(spec.read_scope, spec.public),
            "responses": {
                "200": json_body(_ref(name), "The item", item),
                **error_responses(401, 403, 404, 503, examples={**_not_found(spec), **_scope_error(spec.read_scope)}),
            },
        },
    }
    if spec.writable:
        create, patch = example_of(components[name + "Create"], components), _patch_example(spec, components)
        write_errors = {**_not_found(spec), **_scope_error(spec.write_scope)}
        collection["post"] = {
            "operationId": f"create_{spec.name}",
            "summary": f"Create one of {path}",
            "tags": [path],
            "description": f"Adds an item to the school's {path}. Only the required fields of `{name}Create` "
            f"must be sent; the others take the defaults their descriptions state. The server "
            f"sets `id`, `school_id`, `created_at` and `updated_at`. Needs `{spec.write_scope}`.",
            "security": _security(spec.write_scope),
            "requestBody": {**json_body(_ref(name + "Create"), f"The new item of {path}", create), "required": True},
            "responses": {
                "201": {
                    **json_body(_ref(name), "Created; `Location` is the item's URL", {**item, **create}),
                    "headers": {
                        "Location": {
                            "description": "The new item's URL.",
                            "schema": {"type": "string"},
                            "example": f"{API}/{path}/{_ITEM_FIELDS['id']['examples'][0]}",
                        }
                    },
                },
                **error_responses(400, 401, 403, 409, 422, 503, examples=write_errors),
            },
        }
        one["patch"] = {
            "operationId": f"update_{spec.name}",
            "summary": f"Change one of {path}",
            "tags": [path],
            "description": f"Changes the fields sent and keeps the others; the result must pass the same rules "
            f"as a new item. Needs `{spec.write_scope}`.",
            "security": _security(spec.write_scope),
            "requestBody": {**json_body(_ref(name + "Patch"), "The fields to change", patch), "required": True},
            "responses": {
                "200": json_body(_ref(name), "Changed", {**item, **patch}),
                **error_responses(400, 401, 403, 404, 409, 422, 503, examples=write_errors),
            },
        }
        one["delete"] = {
            "operationId": f"delete_{spec.name}",
            "summary": f"Delete one of {path}",
            "tags": [path],
            "description": f"Deletes the item for good. Needs `{spec.write_scope}`.",
            "security": _security(spec.write_scope),
            "responses": {
                "204": {"description": "Deleted; no body"},
                **error_responses(401, 403, 404, 503, examples=write_errors),
            },
        }
    return {f"{API}/{path}": collection, f"{API}/{path}/{{item_id}}": one}


def _patch_example(spec: AreaSpec, components: dict[str, Any]) -> dict[str, Any]:
    """A change of the first two fields that have a default (or of the first field)."""
    assert spec.model is not None
    model = components[f"{spec.model.__name__}Patch"]
    create = components.get(f"{spec.model.__name__}Create")
    required = set((create or {}).get("required", []))
    names = [n for n in model["properties"] if n not in required][:2] or list(model["properties"])[:1]
    return {n: example_of(model["properties"][n], components) for n in names}


def _singleton(spec: AreaSpec, name: str, components: dict[str, Any]) -> dict[str, Any]:
    body = example_of(components[name], components)
    ops: dict[str, Any] = {
        "get": {
            "operationId": f"get_{spec.name}",
            "summary": f"Get the {spec.path}",
            "tags": [spec.path],
            "description": f"{spec.description} Needs `{spec.read_scope}`.",
            "security": _security(spec.read_scope),
            "responses": {
                "200": json_body(_ref(name), f"The {spec.path}", body),
                **error_responses(
                    401,
                    403,
                    404,
                    503,
                    examples={
                        **_scope_error(spec.read_scope),
                        404: {"error": "not_found", "error_description": f"the {spec.path} has not been set up yet"},
                    },
                    descriptions={404: f"The {spec.path} has not been set up yet (it has required fields)"},
                ),
            },
        }
    }
    if spec.writable:
        patch = _patch_example(spec, components)
        ops["patch"] = {
            "operationId": f"update_{spec.name}",
            "summary": f"Change the {spec.path}",
            "tags": [spec.path],
            "description": f"Changes the fields sent and keeps the others (the defaults, the first time). "
            f"Needs `{spec.write_scope}`.",
            "security": _security(spec.write_scope),
            "requestBody": {**json_body(_ref(name + "Patch"), "The fields to change", patch), "required": True},
            "responses": {
                "200": json_body(_ref(name), f"The changed {spec.path}", {**body, **patch}),
                **error_responses(400, 401, 403, 422, 503, examples=_scope_error(spec.write_scope)),
            },
        }
    return {f"{API}/{spec.path}": ops}
