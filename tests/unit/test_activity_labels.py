"""The field that names each area's items in an app's activity (AreaSpec.label)."""

from __future__ import annotations

from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME


def test_every_label_is_a_text_field_of_its_collection() -> None:
    for spec in AREA_SPECS:
        if spec.label is not None:
            assert spec.kind == "collection" and spec.model is not None, spec.name
            assert spec.label in spec.model.__struct_fields__, spec.name


def test_areas_with_a_name_or_title_are_labelled_by_it() -> None:
    assert BY_NAME["courses"].label == "title"
    assert BY_NAME["students"].label == "name"
    assert BY_NAME["orders"].label == "number"
    assert BY_NAME["coupons"].label == "code"
    assert BY_NAME["subscriptions"].label is None  # nothing names a subscription
