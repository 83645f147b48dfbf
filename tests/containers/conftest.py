"""The container tier: the shipped image built (tests/containers/engine.py) and the
production topology run in containers of it (tests/containers/topology.py), on the
machine's PostgreSQL (a database of the tier's own) and the session's Redis database.
Skips, with the reason in pytest's summary, where no container engine can run. Under
pytest-xdist the whole tier runs on one worker: the image is built (or found in the
cache) once, not by every worker at the same time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ..e2e.conftest import browser, callback_server  # noqa: F401 - fixtures of this tier too
from ..support.deployment import nginx_or_skip
from ..support.infra import PATHS_TAKEN, temporary_database_blocking
from ..support.split import Topology, attach_log_tails
from .engine import BuiltImage, Engine, engine_or_skip, find_engine, project_image
from .topology import running_containers

FOLDER = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(FOLDER):
            item.add_marker(pytest.mark.xdist_group("containers"))


@pytest.fixture(scope="session")
def engine() -> Engine:
    engine, why = find_engine()
    if engine is None:
        PATHS_TAKEN["container tier"] = f"skipped: {why}"
    return engine_or_skip()


@pytest.fixture(scope="session")
def image(engine: Engine) -> BuiltImage:
    built = project_image(engine)
    how = "built now" if built.built_now else "taken from the cache (same inputs)"
    PATHS_TAKEN["container tier"] = f"{engine.name}, image {built.reference} {how}, on {built.base}"
    return built


def _reachable_from_a_container(url: str, what: str) -> None:
    """The containers share the host's network: a server on a TCP address is reachable,
    one on a unix socket in a test's folder (the embedded servers) is not."""
    parts = urlsplit(url)
    if not parts.hostname or parts.hostname.startswith("/") or "host=/" in parts.query:
        pytest.skip(f"the container tier needs {what} on a TCP address (TEST_DATABASE_URL / TEST_REDIS_URL)")


@pytest.fixture(scope="module")
def topology(
    engine: Engine, image: BuiltImage, postgres_admin_url: str, redis_url: str, kek: str, tmp_path_factory
) -> Iterator[Topology]:
    nginx = nginx_or_skip()
    _reachable_from_a_container(postgres_admin_url, "PostgreSQL")
    _reachable_from_a_container(redis_url, "Redis")
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        client.flushdb()
    finally:
        client.close()
    folder: Path = tmp_path_factory.mktemp("containers")
    with temporary_database_blocking(postgres_admin_url, "cs_containers") as database_url:
        with running_containers(engine, image.reference, database_url, redis_url, kek, folder, nginx) as running:
            yield running


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    attach_log_tails(item, report)
    return report
