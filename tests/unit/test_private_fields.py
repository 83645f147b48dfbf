"""The public catalogue's private fields (security review finding 19), as declared."""

from __future__ import annotations

from courseschool.discovery.walkthrough import area_table
from courseschool.resource_api.areas.registry import AREA_SPECS, BY_NAME


def test_private_fields_are_fields_of_public_areas() -> None:
    for spec in AREA_SPECS:
        if spec.private_fields:
            assert spec.public and spec.model is not None, spec.name
            assert set(spec.private_fields) <= set(spec.model.__struct_fields__), spec.name


def test_contact_details_and_paid_links_are_private() -> None:
    assert "email" in BY_NAME["lecturers"].private_fields
    assert "online_url" in BY_NAME["events"].private_fields
    assert "file_url" in BY_NAME["digital_products"].private_fields


def test_the_walkthrough_names_what_anonymous_callers_do_not_get() -> None:
    rows = {line.split(" | ")[0].strip("| `"): line for line in area_table().splitlines()}
    assert "without `email`" in rows["/api/v1/lecturers"]
    assert "without `file_url`" in rows["/api/v1/digital-products"]
    assert "without" not in rows["/api/v1/courses"]
