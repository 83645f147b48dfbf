"""What every area's operations share: the server-set fields, security, parameters, pages of a list, errors."""

from __future__ import annotations

from typing import Any

from ..areas.registry import AreaSpec

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
