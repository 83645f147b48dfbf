"""The kit registers once per platform and remembers it: a second sign-in uses the same
client id; a registration that was deleted (RFC 7592, or pruned by the platform) is
noticed before the browser opens, and the client registers again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import Kit, person_at
from .conftest import Platform, create_person

pytestmark = pytest.mark.browser


async def test_a_registration_is_remembered_and_made_again_when_deleted(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    email, password = create_person(database_url, redis_url, kek, name="Kit Returner", role="lecturer")
    kit = Kit(tmp_path / "home", keyring=False)
    async with person_at(browser, email, password) as person:
        first = await person.login(platform.base_url, kit, force=True)
        second = await person.login(platform.base_url, kit, force=True)
        assert second.record.client_id == first.record.client_id, "registered once per platform"
        assert second.record.registration_uri and second.record.registration_token

        async with httpx.AsyncClient(timeout=15.0) as http:
            deleted = await http.delete(
                second.record.registration_uri, headers={"Authorization": f"Bearer {second.record.registration_token}"}
            )
        assert deleted.status_code == 204, deleted.text
        third = await person.login(platform.base_url, kit, force=True)
    assert third.record.client_id != first.record.client_id
    async with httpx.AsyncClient(timeout=15.0) as http:
        read = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {third.access_token()}"}
        )
    assert read.status_code == 200, read.text
