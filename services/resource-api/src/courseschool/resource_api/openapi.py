"""The resource API's OpenAPI 3.1 description, made from the area declarations that
also make its routes: every path, its scope, its schemas, its examples and its errors.

One mechanism for every area. For an area whose model is `Course`:
- `Course`: an item as the API returns it, every field present, the server-set ones
  (`id`, `school_id`, `created_at`, `updated_at`) read-only;
- `CourseCreate`: the body that creates one (writable collections), where a field with
  a default may be left out;
- `CoursePatch`: the body that changes one (writable areas), every field optional.
Descriptions and examples come from the models' `Meta` annotations (areas/models/).
"""

from __future__ import annotations

import copy
from typing import Any

from courseschool.common.openapi import document, error_responses, example_of, json_body, schemas_of, tag

from .areas.registry import AREA_SPECS, AreaSpec, patch_type

API = "/api/v1"
_SET_BY_SERVER = " Set by the server; ignored if sent."
_ITEM_FIELDS: dict[str, dict[str, Any]] = {
    "id": {
        "type": "string",
        "format": "uuid",
        "readOnly": True,
        "description": "The item's id (UUID), chosen by the server at creation." + _SET_BY_SERVER,
        "examples": ["0a4f6e2c-3b1d-4c5e-9f70-8a6b5c4d3e2f"],
    },
    "school_id": {
        "type": "string",
        "format": "uuid",
        "readOnly": True,
        "description": "Id (UUID) of the school the item belongs to: the access token's school." + _SET_BY_SERVER,
        "examples": ["5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f"],
    },
    "created_at": {
        "type": "string",
        "format": "date-time",
        "readOnly": True,
        "description": "When the item was created (RFC 3339 date-time with offset)." + _SET_BY_SERVER,
        "examples": ["2025-03-01T10:15:00.123456+00:00"],
    },
    "updated_at": {
        "type": "string",
        "format": "date-time",
        "readOnly": True,
        "description": "When the item last changed (RFC 3339 date-time with offset); equal to "
        "`created_at` until the first change." + _SET_BY_SERVER,
        "examples": ["2025-03-02T08:00:00.654321+00:00"],
    },
}
_SETTINGS_UPDATED = {
    **_ITEM_FIELDS["updated_at"],
    "description": "When the settings last changed (RFC 3339 date-time with offset); absent while they "
    "still hold their defaults." + _SET_BY_SERVER,
}
_CURSOR_EXAMPLE = "WyIyMDI1LTAzLTAxVDEwOjE1OjAwKzAwOjAwIiwiMGE0ZjZlMmMiXQ"


def _security(scope: str, public: bool = False) -> list[dict[str, list[str]]]:
    # A bearer token, or a DPoP-bound one with its proof; an empty requirement: the
    # operation also answers anonymous callers.
    required: list[dict[str, list[str]]] = [{"oauth2": [scope]}, {"dpop": []}]
    return [*required, {}] if public else required


def _param(
    name: str, schema: dict[str, Any], description: str, example: Any, where: str = "query", required: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": required,
        "description": description,
        "schema": schema,
        "example": example,
    }


_ITEM_ID = _param(
    "item_id",
    {"type": "string", "format": "uuid"},
    "The item's id (UUID).",
    _ITEM_FIELDS["id"]["examples"][0],
    "path",
    True,
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _scope_error(scope: str) -> dict[int, dict[str, str]]:
    return {
        403: {
            "error": "insufficient_scope",
            "error_description": f"this operation needs the {scope} scope",
            "scope": scope,
        }
    }


def _not_found(spec: AreaSpec) -> dict[int, dict[str, str]]:
    return {404: {"error": "not_found", "error_description": f"no such {spec.path} item"}}


def _list_params(spec: AreaSpec) -> list[dict[str, Any]]:
    params = [
        _param(
            "limit", {"type": "integer", "minimum": 1, "maximum": 100}, "Page size, 1 to 100; 20 when left out.", 20
        ),
        _param(
            "cursor",
            {"type": "string"},
            "The `next_cursor` of the previous page; left out for the first page.",
            _CURSOR_EXAMPLE,
        ),
        _param(
            "updated_since",
            {"type": "string"},
            "Only items changed at or after this moment: an RFC 3339 date-time with offset, or a date (midnight UTC).",
            "2025-03-01T00:00:00Z",
        ),
    ]
    if spec.has_published:
        params.append(
            _param(
                "published",
                {"type": "string", "enum": ["true", "false"]},
                "Only published (`true`) or unpublished (`false`) items; both when left out.",
                "true",
            )
        )
    if spec.public:
        params.append(
            _param(
                "school",
                {"type": "string"},
                "The school's catalogue slug or id: which school's published items an anonymous "
                "caller sees. Ignored with a token (the token's school counts).",
                "demo",
            )
        )
    return params


def _page(name: str, example: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = {
        "type": "object",
        "required": ["items", "next_cursor"],
        "properties": {
            "items": {"type": "array", "items": _ref(name), "description": "The page's items, oldest first."},
            "next_cursor": {
                "type": ["string", "null"],
                "examples": [_CURSOR_EXAMPLE],
                "description": "Pass it as `cursor` for the next page; null on the last page.",
            },
        },
    }
    return schema, {"items": [example], "next_cursor": _CURSOR_EXAMPLE}


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


def _described(description: str, schema: dict[str, Any], example: Any) -> dict[str, Any]:
    return {**schema, "description": description, "examples": [example]}


_INT = {"type": "integer", "minimum": 0}
_FIGURES = {
    "type": "object",
    "title": "Figures",
    "description": "Figures of the caller's school over a period.",
    "required": ["period", "totals", "new_students", "orders_paid", "revenue", "enrolments_per_course"],
    "properties": {
        "period": {
            "type": "object",
            "description": "The period the figures cover: from `from` up to, not including, `to`.",
            "required": ["from", "to"],
            "properties": {
                "from": _described(
                    "Start (RFC 3339 date-time with offset).",
                    {"type": "string", "format": "date-time"},
                    "2025-02-01T00:00:00+00:00",
                ),
                "to": _described(
                    "End, exclusive (RFC 3339 date-time with offset).",
                    {"type": "string", "format": "date-time"},
                    "2025-03-03T00:00:00+00:00",
                ),
            },
        },
        "totals": {
            "type": "object",
            "description": "How many students, members and courses the school has now.",
            "required": ["students", "members", "courses"],
            "properties": {
                k: _described(f"Number of {k} (all time).", _INT, n)
                for k, n in (("students", 412), ("members", 57), ("courses", 12))
            },
        },
        "new_students": _described("Students added during the period.", _INT, 23),
        "orders_paid": _described("Paid orders placed during the period, all currencies.", _INT, 31),
        "revenue": {
            "type": "array",
            "description": "Paid orders of the period per currency, by currency code.",
            "items": {
                "type": "object",
                "required": ["currency", "amount", "orders"],
                "properties": {
                    "currency": _described("ISO 4217 code of the currency.", {"type": "string"}, "EUR"),
                    "amount": _described(
                        "Sum of the orders' totals, an integer in minor units of `currency` "
                        "(cents: 136710 is 1367.10 EUR).",
                        _INT,
                        136710,
                    ),
                    "orders": _described("Number of paid orders in this currency.", _INT, 31),
                },
            },
        },
        "enrolments_per_course": {
            "type": "array",
            "description": "Enrolments made during the period per course, most first.",
            "items": {
                "type": "object",
                "required": ["course_id", "enrolments"],
                "properties": {
                    "course_id": _described(
                        "Id (UUID) of the course.", {"type": "string"}, "3f1c2a9e-8b7d-4e61-9a05-2c4d6e8f0a17"
                    ),
                    "enrolments": _described("Enrolments in the period.", _INT, 18),
                },
            },
        },
    },
}
_FILE: dict[str, Any] = {
    "type": "object",
    "title": "StoredFile",
    "description": "A stored upload.",
    "required": ["id", "url", "filename", "content_type", "size", "created_at"],
    "properties": {
        "id": _described(
            "The file's id (UUID)." + _SET_BY_SERVER,
            {"type": "string", "format": "uuid"},
            "6e7f8a9b-0c1d-4e2f-8a3b-4c5d6e7f8a9b",
        ),
        "url": _described(
            "Where the file is served, without a token, for good.",
            {"type": "string", "format": "uri"},
            "https://school.example/api/v1/storage/files/6e7f8a9b-0c1d-4e2f-8a3b-4c5d6e7f8a9b",
        ),
        "filename": _described(
            "The uploaded name, reduced to letters, digits, `.`, `_` and `-`.", {"type": "string"}, "colour-chart.pdf"
        ),
        "content_type": _described(
            "The media type, checked against the file's first bytes.", {"type": "string"}, "application/pdf"
        ),
        "size": _described("Size in bytes.", _INT, 183204),
        "created_at": _described(
            "When it was stored (RFC 3339 date-time with offset).",
            {"type": "string", "format": "date-time"},
            "2025-03-01T10:15:00.123456+00:00",
        ),
    },
}


def _analytics(spec: AreaSpec) -> dict[str, Any]:
    return {
        f"{API}/{spec.path}": {
            "get": {
                "operationId": "get_analytics",
                "summary": "Figures of the school over a period (default: 30 days)",
                "tags": [spec.path],
                "description": f"{spec.description} The period is at most 366 days; it ends now and starts 30 days "
                f"earlier unless `from` and `to` say otherwise. Amounts are in minor units. "
                f"Needs `{spec.read_scope}`.",
                "security": _security(spec.read_scope),
                "parameters": [
                    _param(
                        "from",
                        {"type": "string"},
                        "Start: an RFC 3339 date-time with offset, or a date (midnight UTC).",
                        "2025-02-01",
                    ),
                    _param(
                        "to",
                        {"type": "string"},
                        "End, exclusive: an RFC 3339 date-time with offset, or a date.",
                        "2025-03-03",
                    ),
                ],
                "responses": {
                    "200": json_body(_ref("Figures"), "The figures", example_of(_FIGURES, {})),
                    **error_responses(
                        400,
                        401,
                        403,
                        503,
                        examples={
                            400: {
                                "error": "invalid_request",
                                "error_description": "the period must run forwards and span at most 366 days",
                            },
                            **_scope_error(spec.read_scope),
                        },
                    ),
                },
            }
        }
    }


def _storage(spec: AreaSpec) -> dict[str, Any]:
    upload_body = {
        "required": True,
        "description": "The file, as a multipart form field named `file`.",
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "The file: PNG, JPEG, GIF, WebP, PDF, or UTF-8 plain text, Markdown or CSV; "
                            "at most 5 MiB (5242880 bytes). Its content must match its media type.",
                        }
                    },
                },
                "example": {"file": "(the file's bytes)"},
            }
        },
    }
    file_id = _FILE["properties"]["id"]["examples"][0]
    return {
        f"{API}/{spec.path}": {
            "post": {
                "operationId": "upload_file",
                "summary": "Upload a file (images, PDF, text; at most 5 MiB)",
                "tags": [spec.path],
                "description": f"{spec.description} Stores the file and answers its stable URL, which anyone may "
                f"fetch without a token (use it in `file_url`, `photo_url`, `logo_url`). "
                f"Needs `{spec.write_scope}`.",
                "security": _security(spec.write_scope),
                "requestBody": upload_body,
                "responses": {
                    "201": {
                        **json_body(_ref("StoredFile"), "Stored; `url` is stable", example_of(_FILE, {})),
                        "headers": {
                            "Location": {
                                "description": "The file's URL.",
                                "schema": {"type": "string", "format": "uri"},
                                "example": _FILE["properties"]["url"]["examples"][0],
                            }
                        },
                    },
                    **error_responses(
                        400,
                        401,
                        403,
                        413,
                        415,
                        503,
                        examples={
                            400: {"error": "invalid_request", "error_description": "the file is empty"},
                            413: {
                                "error": "request_too_large",
                                "error_description": "the file is larger than 5242880 bytes",
                            },
                            415: {
                                "error": "unsupported_media_type",
                                "error_description": "the file's content is not image/png",
                            },
                            **_scope_error(spec.write_scope),
                        },
                    ),
                },
            }
        },
        f"{API}/{spec.path}/{{file_id}}": {
            "get": {
                "operationId": "download_file",
                "summary": "Download a stored file by its stable URL",
                "tags": [spec.path],
                "description": "The file's bytes with its media type; no token needed. Images are shown inline, "
                "other files offered as downloads. Cached for a year: a file never changes.",
                "security": [{}],
                "parameters": [
                    _param(
                        "file_id", {"type": "string", "format": "uuid"}, "The file's id (UUID).", file_id, "path", True
                    )
                ],
                "responses": {
                    "200": {
                        "description": "The file",
                        "content": {
                            "*/*": {"schema": {"type": "string", "format": "binary"}, "example": "(the file's bytes)"}
                        },
                    },
                    **error_responses(
                        404,
                        examples={404: {"error": "not_found", "error_description": "no such file"}},
                        descriptions={404: "No such file"},
                    ),
                },
            }
        },
    }


def _stored(components: dict[str, Any], spec: AreaSpec) -> str:
    """Make the model's schema the item as returned (every field present: the server
    stores the defaults; plus the server-set ones), and the body that creates one
    (`nameCreate`) for a writable collection. Returns the name."""
    name = spec.model.__name__  # type: ignore[union-attr]
    base = components.pop(name)
    singleton = spec.kind == "singleton"
    if spec.writable and not singleton:
        components[name + "Create"] = {
            **copy.deepcopy(base),
            "title": name + "Create",
            "description": f"The fields of a new {name} item; those with a default may be left out.",
        }
    extra = {"updated_at": _SETTINGS_UPDATED} if singleton else _ITEM_FIELDS
    first = {k: v for k, v in extra.items() if k in ("id", "school_id")}
    last = {k: v for k, v in extra.items() if k not in first}
    properties = {**first, **base["properties"], **last}
    components[name] = {
        "type": "object",
        "title": name,
        "description": base.get("description") or f"An item of {spec.path}, as the API returns it.",
        "properties": properties,
        "required": [k for k in properties if not (singleton and k == "updated_at")],
    }
    return name


def resource_openapi(base_url: str, title: str) -> dict[str, Any]:
    models = {s.name: s.model for s in AREA_SPECS if s.model is not None}
    patches = {s.name: patch_type(s.model) for s in AREA_SPECS if s.model is not None and s.writable}
    _, components = schemas_of(*models.values(), *patches.values())
    for area, patch in patches.items():
        components[patch.__name__]["description"] = (
            f"Changes: only the fields sent change, each as described in `{models[area].__name__}`."
        )
    paths: dict[str, Any] = {}
    tags = []
    for spec in AREA_SPECS:
        tags.append(tag(spec.path, spec.description))
        if spec.kind == "collection":
            paths.update(_collection(spec, _stored(components, spec), components))
        elif spec.kind == "singleton":
            paths.update(_singleton(spec, _stored(components, spec), components))
        elif spec.kind == "computed":
            components["Figures"] = _FIGURES
            paths.update(_analytics(spec))
        else:
            components["StoredFile"] = _FILE
            paths.update(_storage(spec))
    description = (
        f"The course-school resource API under {API}: one collection or singleton per area, each "
        "guarded by its `<area>:read` / `<area>:write` scope. Amounts are integers in minor units of "
        "an ISO 4217 currency (4900 with EUR is 49.00 EUR)."
    )
    return document(title, base_url, paths, components, tags, description)
