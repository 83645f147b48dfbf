"""The resource API's handlers are made by one factory per kind of area, but each is
named after its area and action (`courses_list`): in Litestar's route names, and in the
function's own name, which is what a traceback shows."""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from courseschool.resource_api.areas.registry import AREA_SPECS
from courseschool.resource_api.auth.verifier import ANONYMOUS
from courseschool.resource_api.web.routes import all_routes


def test_every_generated_handler_has_a_name_of_its_own() -> None:
    handlers = all_routes()
    names = [handler.name for handler in handlers]
    assert len(set(names)) == len(names), sorted(names)
    areas = {spec.name for spec in AREA_SPECS}
    for handler in handlers:
        function = handler.fn
        assert function.__name__ == function.__qualname__ == function.__code__.co_name == handler.name
        area, _, action = handler.name.rpartition("_")
        assert area in areas and action, handler.name
    assert {"courses_list", "courses_get", "courses_create", "school_update", "analytics_get"} <= set(names)


async def test_a_traceback_names_the_area_of_the_handler_it_passed() -> None:
    class Failing:
        async def get(self, *args: Any) -> None:
            raise RuntimeError("the store is gone")

    handler = next(h for h in all_routes() if h.name == "lecturers_get")
    with pytest.raises(RuntimeError) as caught:
        await handler.fn(item_id="1", resources=Failing(), principal=ANONYMOUS)
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert "lecturers_get" in frames, frames
    assert "get_item" not in frames
