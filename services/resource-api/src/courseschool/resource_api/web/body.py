"""Request bodies of the resource API, decoded once at the edge (within the bounds of
`common.jsonbody`) into what the service takes: a new item as a JSON object, a change
as the area's patch (only its own fields, each of its type, PATCH's absent fields
left out)."""

from __future__ import annotations

from typing import Any

import msgspec

from courseschool.common.errors import InvalidRequestError, ValidationFailedError
from courseschool.common.jsonbody import decode_json

from ..areas.registry import AreaSpec
from ..areas.rules import patch_type


def json_object(body: bytes) -> dict[str, Any]:
    value = decode_json(body)
    if not isinstance(value, dict):
        raise InvalidRequestError("the body must be a JSON object")
    return value


def json_patch(spec: AreaSpec, body: bytes) -> dict[str, Any]:
    assert spec.model is not None
    try:
        patch = decode_json(body, into=patch_type(spec.model))
    except msgspec.ValidationError as exc:
        raise ValidationFailedError(str(exc)) from None
    return msgspec.to_builtins(patch)
