"""Issue 41, item 2, for the all-in-one: `python -m courseschool.platform run` with
REDIS_URL and the Sentinel settings (run passes them to the three apps it builds) over a
master, its replica and three sentinels of the test's own. It serves; the master is
killed and the replica promoted; a whole sign-in works again within RECOVERY_BOUND
seconds of the kill, the sign-in's refresh token made before the failover refreshes,
a revocation made after it is refused by the API within the fan-out bound, the
revocation feed subscribed again, and no request was answered 500."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from courseschool.common.jose import new_kek
from courseschool.common.revocation import FANOUT_BOUND

from ..support.infra import temporary_database
from ..support.net import free_port
from ..support.serving import PLATFORM_ENV, platform_command, spawn, stop, wait_until_answering
from .sentinels import MASTER_NAME, RedisWithSentinels
from .test_faults import _refresh, _tokens, _until
from .test_redis_failover import FEED_BACK_BOUND, RECOVERY_BOUND, SLACK, sentinels  # noqa: F401 - the fixture

READY_TIMEOUT = 90.0


@dataclass(frozen=True)
class Running:
    base_url: str
    log_path: Path
    email: str = "owner@demo.school"  # the demo school's owner, made by `run`
    password: str = "course-school-demo"

    async def feed_back(self) -> bool:
        """The revocation feed was lost, then subscribed again."""
        events = [r.get("event") for r in self.records()]
        return (
            "revocation_feed_lost" in events
            and "revocation_feed_connected" in events[events.index("revocation_feed_lost") :]
        )

    def records(self) -> list[dict]:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]


@pytest.fixture
async def own_database(postgres_admin_url: str, migrated_template: str) -> AsyncIterator[str]:
    async with temporary_database(postgres_admin_url, "cs_sentinel", template=migrated_template) as url:
        yield url


@pytest.fixture
def running(
    sentinels: RedisWithSentinels,  # noqa: F811 - the fixture
    own_database: str,
    tmp_path: Path,
) -> Iterator[Running]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV and not k.startswith("RATE_")}
    env.update(
        DATABASE_URL=own_database,
        REDIS_URL=sentinels.url,
        REDIS_SENTINEL_MASTER=MASTER_NAME,
        REDIS_SENTINELS=sentinels.sentinels,
        KEY_ENCRYPTION_KEY=new_kek(),
        DATA_DIR=str(tmp_path / "data"),
        LOG_FORMAT="json",
        PYTHONUNBUFFERED="1",
    )
    log_path = tmp_path / "platform.log"
    process = spawn(platform_command(port), env, log_path, new_session=True)
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_until_answering(process, f"{base_url}/readyz", log_path, timeout=READY_TIMEOUT, what="the platform")
        yield Running(base_url, log_path)
    finally:
        stop(process, signal.SIGINT, timeout=30.0, group=True)


async def test_the_platform_run_with_sentinels_signs_in_again_after_a_failover(
    sentinels: RedisWithSentinels,  # noqa: F811 - the fixture
    running: Running,
) -> None:
    async with httpx.AsyncClient(timeout=15) as http:
        reg, tokens, _, _ = await _tokens(http, running)  # a Running has what it reads: base_url, email, password
        killed_at = time.monotonic()
        sentinels.kill_master()
        await asyncio.to_thread(sentinels.wait_for_promotion)
        while True:  # a whole sign-in, tried again while the window answers 503 on its way
            try:
                reg, tokens, _, _ = await _tokens(http, running)
                break
            except AssertionError:
                assert time.monotonic() - killed_at < RECOVERY_BOUND, "no sign-in since the failover"
                await asyncio.sleep(0.1)
        recovery = time.monotonic() - killed_at
        refreshed = await _refresh(http, running, reg, tokens["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text
        access = refreshed.json()["access_token"]
        bearer = {"Authorization": f"Bearer {access}"}
        assert (await http.get(f"{running.base_url}/api/v1/courses", headers=bearer)).status_code == 200

        form = {"token": refreshed.json()["refresh_token"], "client_id": reg["client_id"]}
        assert (await http.post(f"{running.base_url}/api/oauth/revoke", data=form)).status_code == 200
        revoked_at = time.monotonic()
        while (await http.get(f"{running.base_url}/api/v1/courses", headers=bearer)).status_code != 401:
            assert time.monotonic() - revoked_at < FANOUT_BOUND + SLACK, "the revoked token still reads the API"
            await asyncio.sleep(0.05)
        assert await _until(running.feed_back, FEED_BACK_BOUND), "the revocation feed never subscribed again"
    print(f"\nplatform run: signed in again {recovery:.2f} s after the kill of the master")
    records = running.records()
    crashed = [r for r in records if r.get("event") == "request_handled" and r.get("status", 0) >= 500]
    assert all(r["status"] == 503 for r in crashed), crashed[:5]
