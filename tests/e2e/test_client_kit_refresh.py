"""Two processes using one stored sign-in refresh at once, a hundred times each
(tests/client/refresh_loop.py): the refresh lock and the re-read under it keep one
lineage; the server never sees a refresh token twice, so it never revokes the grant as
a reuse. Signed in through the library with the opener the test passes (Chromium)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import REPO, Kit, person_at
from .conftest import Platform, admin_cli, create_person

pytestmark = pytest.mark.browser


async def test_two_processes_refresh_one_sign_in_without_a_reuse(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    email, password = create_person(database_url, redis_url, kek, name="Kit Racer", role="lecturer")
    kit = Kit(tmp_path / "home", keyring=False)
    async with person_at(browser, email, password) as person:
        session = await person.login(platform.base_url, kit)
    client_id = session.record.client_id

    start = tmp_path / "start"
    racers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "tests" / "client" / "refresh_loop.py"),
            platform.base_url,
            str(start),
            env=kit.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    await asyncio.sleep(1.0)  # both loaded and waiting
    start.touch()
    results = [await asyncio.wait_for(racer.communicate(), 300) for racer in racers]
    for racer, (_out, err) in zip(racers, results, strict=True):
        assert racer.returncode == 0, err.decode()[-3000:]
    spent = [int(out) for out, _ in results]
    assert sum(spent) >= 100, spent  # every round spent one refresh token, in one process or the other

    record = json.loads((kit.home / "credentials.json").read_text())[platform.base_url]
    async with httpx.AsyncClient(timeout=15.0) as http:
        read = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {record['access_token']}"}
        )
    assert read.status_code == 200, read.text
    grants = json.loads(admin_cli(database_url, redis_url, kek, "--json", "grants", "list", "--client", client_id))
    assert len(grants) == 1, grants  # one lineage, still alive
    reused = admin_cli(
        database_url, redis_url, kek, "--json", "audit", "list", "--kind", "security", "--client", client_id
    )
    assert "refresh_reused" not in reused, reused


class LosesTheFirstAnswer(httpx.BaseTransport):
    """The network between the program and the server: the first token answer is lost on
    the way back (the server did rotate the token), the rest arrive."""

    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.real.handle_request(request)
        if request.url.path.endswith("/token") and not self.lost:
            response.read()
            self.lost += 1
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


async def test_a_lost_refresh_answer_is_asked_again_at_once(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    email, password = create_person(database_url, redis_url, kek, name="Kit Unlucky", role="lecturer")
    kit = Kit(tmp_path / "home", keyring=False)
    async with person_at(browser, email, password) as person:
        session = await person.login(platform.base_url, kit)
    network = LosesTheFirstAnswer()
    session.http = httpx.Client(transport=network, timeout=30.0)
    assert await asyncio.to_thread(session.refresh) is True
    assert network.lost == 1, "the first answer was lost, and the same refresh token asked again"
    session.http = httpx.Client(timeout=30.0)
    assert await asyncio.to_thread(session.refresh) is True, "the lineage goes on: no reuse was seen"
    async with httpx.AsyncClient(timeout=15.0) as http:
        read = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {session.access_token()}"}
        )
    assert read.status_code == 200, read.text
    security = admin_cli(
        database_url,
        redis_url,
        kek,
        "--json",
        "audit",
        "list",
        "--kind",
        "security",
        "--client",
        session.record.client_id,
    )
    assert "refresh_reused" not in security, security
