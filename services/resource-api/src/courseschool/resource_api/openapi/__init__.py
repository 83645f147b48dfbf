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

from courseschool.common.openapi import document, schemas_of, tag

from ..areas.registry import AREA_SPECS, AreaSpec
from ..areas.rules import patch_type
from .areas import _collection, _singleton
from .computed import _FIGURES, _FILE, _analytics, _storage
from .parts import _ITEM_FIELDS, _SETTINGS_UPDATED, API


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
