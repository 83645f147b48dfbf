"""The steps `python -m bench.hotspots --breakdown` times are found where it patches them: a
module or method renamed in the product leaves the breakdown broken otherwise, and
nothing else runs it."""

from __future__ import annotations

import importlib
import inspect

from bench.hotspots import STEPS


def test_every_timed_step_names_a_function_of_the_product() -> None:
    for module_name, attribute, label in STEPS:
        owner: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            assert hasattr(owner, part), f"{label}: {module_name}.{attribute} is gone"
            owner = getattr(owner, part)
        assert inspect.isfunction(owner) or inspect.ismethod(owner), f"{label}: {attribute} is not a function"
