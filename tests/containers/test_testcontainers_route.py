"""The fixtures' container route (tests/support/infra.py): testcontainers on podman's
Docker-compatible API where podman is the engine, running the PostgreSQL and Redis images
built locally from Debian's packages (service_images.py), and a plain reason to fall
back where an image is missing."""

from __future__ import annotations

import os

import pytest

from courseschool.common.server_versions import (
    POSTGRES_OLDEST,
    REDIS_OLDEST,
    check_postgres,
    check_redis,
    version_tuple,
)

from ..support.infra import PATHS_TAKEN, container_engine, engine_for_image, server_container
from .engine import BuiltImage

pytestmark = pytest.mark.containers


@pytest.fixture
def docker_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine_for_image points testcontainers at the engine through the environment;
    restored after the test."""
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("TESTCONTAINERS_RYUK_DISABLED", raising=False)


def test_an_engine_answers_on_a_docker_compatible_api(image: BuiltImage) -> None:
    client, what, _ = container_engine()
    assert client is not None, what
    assert client.ping() is True
    assert "podman" in what or "Docker" in what


def test_an_image_the_engine_lacks_falls_back_and_says_why(docker_env: None, image: BuiltImage) -> None:
    usable, why = engine_for_image("localhost/courseschool-no-such-image:0")
    assert usable is False
    assert "localhost/courseschool-no-such-image:0 is neither present nor pullable" in why


def test_testcontainers_runs_an_image_the_engine_has(docker_env: None, image: BuiltImage) -> None:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    usable, why = engine_for_image(image.base)
    assert usable, why
    script = "import os; print('uid', os.getuid(), 'ready', flush=True); import time; time.sleep(60)"
    container = (
        DockerContainer(image.base)
        .with_command(["python3", "-c", script])
        .with_kwargs(network_mode="host", user="10001:10001")
        .waiting_for(LogMessageWaitStrategy("ready").with_startup_timeout(60))
    )
    with container:
        out, _ = container.get_logs()
    assert b"uid 10001 ready" in out


async def test_the_fixtures_servers_are_containers_of_the_local_debian_images(
    image: BuiltImage, db_pool, redis_client
) -> None:
    """Where an engine runs and no server is named, the suite's own servers are the
    oldest of the supported range: bookworm's PostgreSQL 15 and Redis 7.0."""
    if os.environ.get("TEST_DATABASE_URL") or os.environ.get("TEST_REDIS_URL") or os.environ.get("TEST_SERVERS"):
        pytest.skip("the servers were chosen by TEST_DATABASE_URL / TEST_REDIS_URL / TEST_SERVERS")
    assert PATHS_TAKEN["PostgreSQL"].startswith("testcontainers: localhost/courseschool-postgres:"), PATHS_TAKEN
    assert PATHS_TAKEN["Redis"].startswith("testcontainers: localhost/courseschool-redis:"), PATHS_TAKEN
    postgres, redis = await check_postgres(db_pool), await check_redis(redis_client)
    assert postgres is not None and version_tuple(postgres)[:1] == POSTGRES_OLDEST[:1]
    assert redis is not None and version_tuple(redis)[:2] == REDIS_OLDEST


def test_a_server_container_that_cannot_start_is_a_reason_to_fall_back(docker_env: None, image: BuiltImage) -> None:
    from .service_images import REDIS

    assert engine_for_image(image.base)[0]  # testcontainers pointed at the engine
    with server_container((REDIS, "localhost/courseschool-no-such-image:0")) as started:
        assert isinstance(started, str)
        assert started.startswith("a container of localhost/courseschool-no-such-image:0 did not start")
