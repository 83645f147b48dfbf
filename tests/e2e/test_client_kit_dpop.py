"""The kit with DPoP asked for (RFC 9449): the code bound to the sign-in's key from the
first request (`dpop_jkt`), every API call and refresh with a new proof by that key. The
same access token sent as a bearer token is refused; a refresh without a proof too. Also
a Client ID Metadata Document's URL given, where the platform's document site serves one
(skipped otherwise): nothing is registered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import Kit, person_at
from .conftest import Platform, create_person

pytestmark = pytest.mark.browser


async def test_a_dpop_sign_in_binds_its_tokens_to_the_key(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    email, password = create_person(database_url, redis_url, kek, name="Kit Binder", role="lecturer")
    kit = Kit(tmp_path / "home", keyring=False)
    async with person_at(browser, email, password) as person:
        session = await person.login(platform.base_url, kit, dpop=True)
    assert "dpop_jkt=" in person.asked[0]
    assert session.record.token_type == "DPoP"

    def calls() -> tuple[int, int, bool]:
        with httpx.Client(auth=session, timeout=30.0) as api:
            first = api.get(f"{platform.base_url}/api/v1/courses").status_code
            spent = session.refresh()  # with a proof by the same key
            second = api.get(f"{platform.base_url}/api/v1/courses").status_code
        return first, second, spent

    first, second, spent = await asyncio.to_thread(calls)
    assert (first, second, spent) == (200, 200, True)

    record = json.loads((kit.home / "credentials.json").read_text())[platform.base_url]
    assert record["dpop_key"]["d"], "the key is kept with the sign-in"
    async with httpx.AsyncClient(timeout=15.0) as http:
        as_bearer = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {record['access_token']}"}
        )
        unproven = await http.post(
            f"{platform.base_url}/api/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": record["refresh_token"],
                "client_id": record["client_id"],
            },
        )
    assert as_bearer.status_code == 401, as_bearer.text
    assert unproven.status_code == 400 and unproven.json()["error"] == "invalid_grant", unproven.text
    status = kit.run("status", platform.base_url)
    assert status.returncode == 0 and "DPoP" in status.stdout, status.stderr
