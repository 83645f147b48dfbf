"""The field that names each area's items in an app's activity (AreaSpec.label), and the
activity's settings."""

from __future__ import annotations

import pytest

from courseschool.common.settings import SettingsError, load_settings
from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME
from courseschool.resource_api.settings import ResourceSettings


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


def test_activity_settings_have_defaults_and_bounds() -> None:
    settings = load_settings(ResourceSettings, environ={})
    assert settings.activity_retention_days == 90
    assert settings.activity_flush_interval == 5.0
    assert load_settings(ResourceSettings, environ={"ACTIVITY_RETENTION_DAYS": "30"}).activity_retention_days == 30
    for name, value in (
        ("ACTIVITY_RETENTION_DAYS", "0"),
        ("ACTIVITY_FLUSH_INTERVAL", "0"),
        ("ACTIVITY_FLUSH_BATCH", "5"),
        ("HOUSEKEEPING_INTERVAL", "0"),
    ):
        with pytest.raises(SettingsError, match=name):
            load_settings(ResourceSettings, environ={name: value})
