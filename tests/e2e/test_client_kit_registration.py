"""The kit registers once per platform and remembers it: a second sign-in uses the same
client id; a registration that was deleted (RFC 7592, or pruned by the platform) is
noticed before the browser opens, and the client registers again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import Kit, approve
from .conftest import Platform, create_person

pytestmark = pytest.mark.browser


async def test_a_registration_is_remembered_and_made_again_when_deleted(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    email, password = create_person(database_url, redis_url, kek, name="Kit Returner", role="lecturer")
    kit = Kit(tmp_path / "home", keyring=False)
    context = await browser.new_context()
    page = await context.new_page()
    loop = asyncio.get_running_loop()

    def opener(url: str) -> bool:
        asyncio.run_coroutine_threadsafe(approve(page, url, email, password), loop)
        return True

    from courseschool_client import CourseSchool

    def login() -> Any:
        return CourseSchool.login(
            platform.base_url,
            scope="openid courses:read",
            force=True,
            storage="file",
            folder=kit.home,
            open_browser=opener,
        )

    first = await asyncio.to_thread(login)
    second = await asyncio.to_thread(login)
    assert second.record.client_id == first.record.client_id, "registered once per platform"
    assert second.record.registration_uri and second.record.registration_token

    async with httpx.AsyncClient(timeout=15.0) as http:
        deleted = await http.delete(
            second.record.registration_uri, headers={"Authorization": f"Bearer {second.record.registration_token}"}
        )
    assert deleted.status_code == 204, deleted.text
    third = await asyncio.to_thread(login)
    await context.close()
    assert third.record.client_id != first.record.client_id
    async with httpx.AsyncClient(timeout=15.0) as http:
        read = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {third.access_token()}"}
        )
    assert read.status_code == 200, read.text
