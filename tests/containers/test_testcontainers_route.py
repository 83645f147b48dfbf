"""The fixtures' container route (tests/support/infra.py): testcontainers on podman's
Docker-compatible API where podman is the engine, used for an image the engine has (or
can pull), and a plain reason to fall back where it has not (postgres:16-alpine and
redis:7-alpine on a machine without an image registry)."""

from __future__ import annotations

import pytest

from ..support.infra import container_engine, engine_for_image
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
