"""The two areas that are not items: analytics (figures computed from the school's data) and storage (uploads)."""

from __future__ import annotations

from typing import Any

from courseschool.common.openapi import error_responses, example_of, json_body

from ..areas.registry import AreaSpec
from .parts import _SET_BY_SERVER, API, _param, _ref, _scope_error, _security


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
