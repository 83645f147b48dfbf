"""The end-to-end platforms start on a port free a moment before; when another process
takes it first, the platform says so and exits, and `running_platform` starts it again on
another port instead of failing the tests that need it (seen once in a whole run)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..support.net import free_port
from . import conftest


def test_a_platform_whose_port_was_taken_starts_on_another(
    database_url: str, redis_url: str, kek: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = taken.getsockname()[1]
        ports: Iterator[int] = iter([held, free_port()])
        monkeypatch.setattr(conftest, "free_port", lambda: next(ports))
        with conftest.running_platform(database_url, redis_url, kek, tmp_path) as running:
            assert running.address != f"http://127.0.0.1:{held}"
            assert running.base_url == running.address  # its origin follows the port it got
            assert httpx.get(f"{running.address}/healthz", timeout=10).status_code == 200
