"""The parallel suite's isolation (tests/support/infra.py): each pytest-xdist worker gets a Redis
database of its own, counted from the one TEST_REDIS_URL names, and a clear refusal when
the server has too few."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.infra import redis_url_for_worker, worker_number


def test_each_worker_gets_the_named_database_plus_its_number():
    assert redis_url_for_worker("redis://127.0.0.1:6379/7", 0) == "redis://127.0.0.1:6379/7"
    assert [redis_url_for_worker("redis://127.0.0.1:6379/7", n) for n in (1, 2, 3)] == [
        "redis://127.0.0.1:6379/8",
        "redis://127.0.0.1:6379/9",
        "redis://127.0.0.1:6379/10",
    ]


def test_a_url_without_a_database_counts_from_zero_and_keeps_everything_else():
    assert redis_url_for_worker("redis://127.0.0.1:6379", 2) == "redis://127.0.0.1:6379/2"
    assert redis_url_for_worker("rediss://user:pw@cache.test:6380/4?ssl_cert_reqs=none", 1) == (
        "rediss://user:pw@cache.test:6380/5?ssl_cert_reqs=none"
    )


def test_a_unix_socket_url_gets_its_database_in_the_query():
    assert redis_url_for_worker("unix:///tmp/redis.sock?db=3", 2) == "unix:///tmp/redis.sock?db=5"
    assert redis_url_for_worker("unix:///tmp/redis.sock", 1) == "unix:///tmp/redis.sock?db=1"


def test_a_worker_past_the_servers_last_database_is_refused(monkeypatch):
    monkeypatch.delenv("TEST_REDIS_DATABASES", raising=False)
    assert redis_url_for_worker("redis://127.0.0.1:6379/11", 4) == "redis://127.0.0.1:6379/15"
    with pytest.raises(RuntimeError, match=r"worker gw5 needs database 16: the server has 16 \(0-15\)"):
        redis_url_for_worker("redis://127.0.0.1:6379/11", 5)
    monkeypatch.setenv("TEST_REDIS_DATABASES", "32")
    assert redis_url_for_worker("redis://127.0.0.1:6379/11", 5) == "redis://127.0.0.1:6379/16"


def test_the_worker_number_comes_from_xdist(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert worker_number() == 0
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert worker_number() == 3


def test_a_group_of_tests_runs_on_one_worker(tmp_path):
    """`--dist loadgroup` as `make test` runs it: the tests of one xdist_group land on one
    worker. The faults, the containers and each `npm ci` folder rely on it. pytest 9.2
    broke it silently (xdist renames a test's node id to carry its group, and 9.2's node
    ids no longer take the rename): the group spread over every worker and two `npm ci`
    ran at once in bench/. The lock pins a pytest where it works; this says when not."""
    (tmp_path / "test_grouped.py").write_text(
        "import os, pathlib, pytest\n"
        "pytestmark = pytest.mark.xdist_group('together')\n"
        "@pytest.mark.parametrize('n', range(8))\n"
        "def test_one(n):\n"
        "    pathlib.Path(f'worker-{n}').write_text(os.environ['PYTEST_XDIST_WORKER'])\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,  # against a hang only: three workers' start took over 120 s on a shared machine
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {(tmp_path / f"worker-{n}").read_text() for n in range(8)}
    assert len(workers) == 1, f"one group ran on {sorted(workers)}"
