"""The parallel suite's isolation (tests/infra.py): each pytest-xdist worker gets a Redis
database of its own, counted from the one TEST_REDIS_URL names, and a clear refusal when
the server has too few."""

from __future__ import annotations

import pytest

from tests.infra import redis_url_for_worker, worker_number


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
