"""End-to-end fixtures: the all-in-one platform as a real process on a real port,
and a loopback callback server such as a command-line client runs.

The platform is started exactly as an operator would start it
(`python -m courseschool.platform run --port N`), pointed at the session's fresh,
migrated database and at the session's Redis; the metadata-document test runs the same
app with its own document site (tests/support/platform_with_site.py). Nothing is
imported into this process from the product except through HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ..support.deployment import REPO
from ..support.infra import temporary_database
from ..support.net import free_port
from ..support.serving import PLATFORM_ENV, spawn, stop, tail, wait_until_answering

DEMO_EMAIL = "e2e-owner@example.test"
DEMO_PASSWORD = "e2e correct horse battery staple"
READY_TIMEOUT = 90.0  # a bound, not a wait: start-up competes with the other xdist workers
STOP_TIMEOUT = 15.0
PORT_TRIES = 3


@dataclass(frozen=True)
class Platform:
    base_url: str
    email: str
    password: str
    process: subprocess.Popen[bytes]
    log_path: Path
    address: str = ""  # where it listens, when that differs from the public origin
    internal_token: str = ""  # its INTERNAL_TOKEN (/internal/*, /metrics)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture(scope="session")
async def database_url(postgres_admin_url: str, migrated_template: str) -> AsyncIterator[str]:
    """The end-to-end tests' database, apart from the in-process tests' of the same
    worker: the platforms started here run the tasks a deployment runs (the mail
    delivery, housekeeping), which would otherwise claim the rows an integration test
    is counting."""
    async with temporary_database(postgres_admin_url, "cs_e2e", template=migrated_template) as url:
        yield url


@pytest.fixture(scope="session")
def platform(
    database_url: str, redis_url: str, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    with running_platform(database_url, redis_url, kek, tmp_path_factory.mktemp("platform-data")) as running:
        yield running


@pytest.fixture(scope="session")
def platform_b(
    platform: Platform, database_url: str, redis_url: str, kek: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """A second replica sharing the first one's Postgres, Redis, key-encryption key and
    public origin (the issuer); it listens on a port of its own."""
    data_dir = tmp_path_factory.mktemp("platform-b-data")
    # One mail delivery per outbox: the first replica's sends to the catcher the tests
    # read (its data folder); this one's first pass would come only after a day.
    quiet = {"MAIL_INTERVAL": "86400"}
    with running_platform(
        database_url, redis_url, kek, data_dir, base_url=platform.base_url, extra_env=quiet
    ) as running:
        yield running


@contextlib.contextmanager
def running_platform(
    database_url: str,
    redis_url: str,
    kek: str,
    data_dir: Path,
    *,
    base_url: str | None = None,
    extra_env: dict[str, str] | None = None,
    command: tuple[str, ...] = ("courseschool.platform", "run"),
    public_host: str = "127.0.0.1",
) -> Iterator[Platform]:
    """`extra_env` adds or replaces settings (a rate limit a test counts against, say);
    `command` is the module run with `-m` (and `--port N`): the platform's `run` unless a
    test needs what no setting gives (tests/support/platform_with_site.py). `public_host`:
    the host of the public origin at the platform's port (passkeys need a name: localhost)."""
    internal_token = secrets.token_urlsafe(32)
    log_path = data_dir / "platform.log"
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DEMO_EMAIL=DEMO_EMAIL,
        DEMO_PASSWORD=DEMO_PASSWORD,
        DATA_DIR=str(data_dir),
        LOG_FORMAT="json",
        PYTHONUNBUFFERED="1",
        KEY_ENCRYPTION_KEY=kek,  # the same key as the in-process apps: they share the database
        # Every test process calls from 127.0.0.1: generous limits (the limits have tests of their own).
        RATE_REGISTER_PER_IP="10000/60",
        RATE_TOKEN_PER_IP="10000/60",
        RATE_TOKEN_PER_CLIENT="10000/60",
        RATE_LOGIN_PER_IP="10000/60",
        RATE_AUTHORIZE_PER_IP="10000/60",
        RATE_LOGOUT_PER_IP="10000/60",
        RATE_CLIENT_CONFIGURATION_PER_IP="10000/60",
        RATE_CLIENT_CONFIGURATION_PER_CLIENT="10000/60",
        RATE_PASSWORD_RESET_PER_IP="10000/60",
        INTERNAL_TOKEN=internal_token,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),  # tests.support
    )
    # A port free a moment ago may be taken by another process before the platform binds
    # it (free_port's race, seen once in a whole run); the platform then says so and exits,
    # and is started again on another.
    for tries_left in reversed(range(PORT_TRIES)):
        port = free_port()
        address = f"http://127.0.0.1:{port}"
        public = base_url or f"http://{public_host}:{port}"
        process = spawn(
            [sys.executable, "-m", *command, "--port", str(port)],
            {**env, "BASE_URL": public, **(extra_env or {})},
            log_path,
        )
        try:
            wait_until_answering(process, f"{address}/readyz", log_path, timeout=READY_TIMEOUT, what="the platform")
            break
        except pytest.fail.Exception:
            if tries_left and process.poll() is not None and f"127.0.0.1:{port} is in use" in tail(log_path):
                continue
            stop(process, signal.SIGINT, timeout=STOP_TIMEOUT)
            raise
    try:
        yield Platform(
            base_url=public,
            email=DEMO_EMAIL,
            password=DEMO_PASSWORD,
            process=process,
            log_path=log_path,
            address=address,
            internal_token=internal_token,
        )
        # A crash during the tests must not pass unnoticed.
        assert process.poll() is None, f"the platform died during the tests:\n{tail(log_path)}"
    finally:
        stop(process, signal.SIGINT, timeout=STOP_TIMEOUT)


def admin_cli(database_url: str, redis_url: str, kek: str, *args: str) -> str:
    """Run the authorization server's admin CLI as an operator would; its output."""
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, KEY_ENCRYPTION_KEY=kek)
    done = subprocess.run(
        [sys.executable, "-m", "courseschool.authz", "admin", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def create_person(database_url: str, redis_url: str, kek: str, *, name: str, role: str) -> tuple[str, str]:
    """A new person of the demo school, made with the admin CLI: their email and password."""
    email = f"{role}-{secrets.token_hex(4)}@example.test"
    password = secrets.token_urlsafe(18)
    admin_cli(
        database_url,
        redis_url,
        kek,
        *("users", "create", "--school", "demo", "--email", email, "--name", name, "--role", role),
        f"--password={password}",  # one value even when it begins with "-" (token_urlsafe may)
    )
    return email, password


# -- the loopback callback server (RFC 8252 §7.3), as a CLI runs it -------------------------

CLOSE_PAGE = (
    b'<!doctype html><html><head><meta charset="utf-8"><title>Signed in</title></head>'
    b"<body><p>You can close this window.</p></body></html>"
)


@dataclass
class CallbackServer:
    port: int
    path: str = "/callback"
    received: queue.Queue[dict[str, str]] = field(default_factory=queue.Queue)
    raw_queries: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def wait(self, timeout: float = 10.0) -> dict[str, str]:
        """The query of the next request to the callback path.

        Polled on the event loop's own timer rather than awaited through a thread: twice a
        whole run stopped after the browser had reached this server, the loop asleep with
        no timer although the thread's result was ready (#37); a sleep needs no wake-up
        from another thread."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                return self.received.get_nowait()
            except queue.Empty:
                if asyncio.get_running_loop().time() >= deadline:
                    raise AssertionError(f"the callback server got no request within {timeout} s") from None
                await asyncio.sleep(0.02)

    def assert_idle(self) -> None:
        assert self.received.empty(), f"unexpected callback(s): {self.raw_queries}"


def _handler_for(server: CallbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != server.path:
                self.send_error(404)
                return
            server.raw_queries.append(parts.query)
            query = parse_qs(parts.query, keep_blank_values=True)
            server.received.put({k: v[0] if len(v) == 1 else v for k, v in query.items()})  # type: ignore[misc]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(CLOSE_PAGE)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(CLOSE_PAGE)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def callback_server() -> Iterator[CallbackServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server = CallbackServer(port=httpd.server_address[1])
    httpd.RequestHandlerClass = _handler_for(server)
    thread = threading.Thread(target=httpd.serve_forever, name="callback-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# -- headless Chromium, Debian's package, for the browser tests ------------------------------

# Debian's build, not a Playwright download: the tests use the browser the machine has.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Any]:
    """One Chromium per test session (per pytest-xdist worker); each test opens contexts
    of its own in it, which share no cookies or storage."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package to run the browser tests")
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()
