"""The apps-page sections of the bench: the activity query (bench/activity.py) on a small
scale against a real PostgreSQL, both sides summarised and its worst ratio stated; and the
connected-apps page itself (bench/apps_page.py) loaded with wrk by a signed-in person on two
platform processes, every answer checked for the page's activity. No timing is asserted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bench import apps_page, stack
from bench.activity import activity_section
from bench.harness import RedisServer, wrk
from tests.support.net import free_port
from tests.support.serving import wait_until_answering


async def test_the_query_section_measures_both_sides(postgres_admin_url: str) -> None:
    section = await activity_section(postgres_admin_url, rows=2000, rounds=1, count=3)
    rows = [line for line in section if line.startswith("| by ")]
    assert [line.split(" | ")[0] for line in rows] == ["| by user", "| by grant ids"]
    assert "2,000 rows of others' activity" in "\n".join(section)
    worst = max(float(line.rsplit("|", 2)[1]) for line in rows)
    assert f"- Worst ratio: {worst:.2f} (the target: at most 1.10)." in section
    for line in rows:  # the blocks a summary touches, on either side
        small_blocks, large_blocks = (int(cell) for cell in line.split(" | ")[3:5])
        assert small_blocks > 0 and large_blocks > 0


@pytest.fixture
def bench_redis(tmp_path: Path) -> Iterator[str]:
    """A Redis server of the bench's own, as `make bench` starts one: the bench's platforms
    run with limits no load reaches (bench/stack.py RATES), whose leases of tens of thousands
    of requests would use up, for the rest of the minute, the counters that this worker's
    other platforms keep for 127.0.0.1 in the worker's Redis."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path / "redis.log")
    yield server.url
    server.stop()


@pytest.mark.skipif(not shutil.which("wrk"), reason="needs wrk (Debian: apt-get install wrk)")
async def test_the_page_section_loads_the_signed_in_page_on_both_sides(
    postgres_admin_url: str, bench_redis: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack, "PG", postgres_admin_url)
    monkeypatch.setenv("BENCH_REDIS_URL", bench_redis)
    loads: list[tuple[str, dict[str, float]]] = []

    def counted_wrk(url: str, seconds: float, **kw: object) -> dict[str, float]:
        result = wrk(url, seconds, **kw)  # type: ignore[arg-type]
        loads.append((url, result))
        return result

    monkeypatch.setattr(apps_page, "wrk", counted_wrk)
    lines, ratio = await apps_page.apps_page_section("granian", tmp_path, rows=2000, rounds=1, seconds=2)
    text = "\n".join(lines)
    assert "2,000 rows of others' activity" in text
    assert f"{ratio:.2f} of its small-table time" in text
    # a warm-up round and one counted, each on both processes, every answer the page with its activity
    assert len(loads) == 4 and len({url for url, _ in loads}) == 2
    assert all(result["requests"] > 0 and result["failures"] == 0 for _, result in loads), loads
    assert ratio > 0
    # the platforms counted their requests in the bench's own Redis, not the worker's
    redis = Redis.from_url(bench_redis)
    try:
        assert await redis.keys("authz:rate:rate_token_per_ip:127.0.0.1:*")
    finally:
        await redis.aclose()


@pytest.mark.skipif(not shutil.which("wrk"), reason="needs wrk (Debian: apt-get install wrk)")
def test_the_page_script_counts_an_answer_without_the_page_as_a_failure(tmp_path: Path) -> None:
    """cookie.lua: an answer that lacks MUST_HAVE (a plain file server's page stands for
    any wrong page, e.g. the sign-in page a lost session would get) is a failure."""
    (tmp_path / "index.html").write_text("<p>Sign in</p>")
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}/index.html"
        wait_until_answering(server, url, log, timeout=30, what="the file server")
        wrong = wrk(url, 1, script="cookie.lua", env={"COOKIE": "x=1", "MUST_HAVE": "read courses"}, core=None)
        right = wrk(url, 1, script="cookie.lua", env={"COOKIE": "x=1", "MUST_HAVE": "Sign in"}, core=None)
    finally:
        server.terminate()
        server.wait()
    assert wrong["requests"] > 0 and wrong["failures"] == wrong["requests"]
    assert right["requests"] > 0 and right["failures"] == 0
