"""Security review finding 9: fetching a Client ID Metadata Document.

- The DNS lookup is inside the fetch's time limit and runs on the fetcher's own
  small pool: a slow zone neither stalls the loop's shared executor (every new
  database or Redis connection resolves there) nor holds a request past the limit.
- Every failure cause shows the same page (otherwise the server is a port scanner
  of public hosts); the cause goes to the log only.

A local HTTPS server with a test CA (tests/support/tls.py) stands in for the web. Slow DNS is
made deterministic: the lookup of one test host blocks until the test ends.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
import structlog

from courseschool.authz.app import create_app

from ..support.tls import Reply
from .cimd import LOOPBACK, cimd_settings, publish
from .conftest import serve
from .flow import Flow, pkce_pair

SLOW_HOST = "slow-dns.cimd_flow.test"
DEAD_HOST = "no-such-host.cimd_flow.test"
# A guard against hanging for ever, far beyond the one-second limit of these apps:
# reaching it means the limit did not hold, not that something was slow.
HANG_GUARD = 30.0


class SlowDns:
    """socket.getaddrinfo, except that SLOW_HOST blocks until released and DEAD_HOST
    does not resolve; every other name resolves as usual."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = 0
        self._real = socket.getaddrinfo

    def __call__(self, host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == SLOW_HOST:
            self.entered += 1
            self.release.wait(HANG_GUARD * 2)
            raise socket.gaierror(socket.EAI_AGAIN, "released")
        if host == DEAD_HOST:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self._real(host, *args, **kwargs)


@pytest.fixture
def slow_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowDns]:
    dns = SlowDns()
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    try:
        yield dns
    finally:
        dns.release.set()


async def _start(flow: Flow, client_id: str) -> Any:
    _, challenge = pkce_pair()
    return await flow.start(flow.authorize_params({"client_id": client_id, "redirect_uris": [LOOPBACK]}, challenge))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_every_failure_cause_shows_the_same_page(cimd_flow: Flow, site, slow_dns: SlowDns) -> None:
    server, _ = site
    causes = {
        "/missing.json": Reply(b"{}", 404),
        "/unavailable.json": Reply(b"{}", 503),
        "/moved.json": Reply(b"", 302, {"Location": "https://localhost/elsewhere.json"}),
        "/slow.json": Reply(b"{}", delay=1.5),
        "/large.json": Reply(b"x" * 6000),
        "/html.json": Reply(b"{}", headers={"Content-Type": "text/html"}),
        "/not-json.json": Reply(b"not json"),
        "/array.json": Reply(b"[]"),
    }
    server.replies.update(causes)
    publish(server, "/other-id.json", client_id="https://localhost/someone-else.json")
    urls = [server.url(path) for path in [*causes, "/other-id.json"]]
    urls += [f"https://localhost:{_closed_port()}/refused.json", f"https://{DEAD_HOST}/c.json"]
    with structlog.testing.capture_logs() as events:
        answers = [await _start(cimd_flow, url) for url in urls]
    assert {a.status_code for a in answers} == {400}
    assert all("location" not in a.headers for a in answers)
    assert len({a.text for a in answers}) == 1, "the pages tell failure causes apart"
    # the cause is logged, for the operator only
    details = {e["detail"] for e in events if e["event"] == "request_refused"}
    assert len(details) == len(urls), details
    assert await cimd_flow.count("authz_clients") == 0


async def test_a_private_address_shows_the_same_page(
    authz_settings, site, clean_db, redis_client, clock, cimd_flow: Flow
) -> None:
    server, _ = site
    server.replies["/missing.json"] = Reply(b"{}", 404)
    reference = await _start(cimd_flow, server.url("/missing.json"))
    publish(server, "/client.json")
    # The platform's own document web: the public web only, whatever the settings say.
    async with serve(create_app(cimd_settings(authz_settings), clock=clock)) as client:
        private = await _start(Flow(client, clean_db, redis_client), server.url("/client.json"))
    assert private.status_code == reference.status_code == 400
    assert private.text == reference.text
    assert "/client.json" not in server.hits  # refused before any connection


async def test_slow_dns_holds_up_nothing_else_and_fails_within_the_limit(
    cimd_flow: Flow, slow_dns: SlowDns, database_url: str, redis_url: str, site
) -> None:
    server, _ = site
    server.replies["/missing.json"] = Reply(b"{}", 404)
    reference = await _start(cimd_flow, server.url("/missing.json"))
    # More lookups than any default executor has threads (32 at most), each of a new URL.
    pending = [asyncio.create_task(_start(cimd_flow, f"https://{SLOW_HOST}/c{i}.json")) for i in range(40)]
    try:
        for _ in range(500):
            if slow_dns.entered:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # every request has reached its lookup by now
        assert slow_dns.entered, "no lookup of the slow host started"
        # While the slow lookups hang, the loop's shared executor still resolves names,
        # and new database and Redis connections (which resolve there) are made.
        loop = asyncio.get_running_loop()
        assert await asyncio.wait_for(loop.getaddrinfo("localhost", 5432), HANG_GUARD)
        conn = await asyncio.wait_for(asyncpg.connect(database_url.replace("127.0.0.1", "localhost")), HANG_GUARD)
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
        fresh = aioredis.from_url(redis_url.replace("127.0.0.1", "localhost"))
        assert await asyncio.wait_for(fresh.ping(), HANG_GUARD)
        await fresh.aclose()
        # and every CIMD request is answered although its lookup never finishes
        answers = await asyncio.wait_for(asyncio.gather(*pending), HANG_GUARD)
    finally:
        slow_dns.release.set()
        for task in pending:
            task.cancel()
    assert {a.status_code for a in answers} == {400}
    assert {a.text for a in answers} == {reference.text}
