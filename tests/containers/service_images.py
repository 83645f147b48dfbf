"""PostgreSQL and Redis images for the test fixtures' container path (tests/support/infra.py),
built here from the container tier's base (engine.base_image: the official Python image
where a registry answers, else the debootstrapped Debian bookworm) with Debian's own
packages: bookworm's PostgreSQL 15 and Redis 7.0, the oldest of the supported range
(courseschool.common.server_versions). No image registry is needed.

Each image is tagged with a hash of its base and its recipe and kept in the engine's
storage, like the tier's image: a run whose recipe did not change builds nothing, a clean
machine builds each once (about a minute each on two busy cores, after the base). One
builder at a time on the machine (a file lock beside the base's): the other xdist
workers wait for it and then find the image.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .engine import BUILD_TIMEOUT, CACHE_DIR, Engine, base_image, find_engine


@dataclass(frozen=True)
class Service:
    name: str  # the image's repository is localhost/courseschool-<name>
    packages: tuple[str, ...]
    user: str  # the user the server runs as (Debian's package makes it)
    # The command that starts the server on `port` of the host's network (containers run
    # with --network host: rootful podman here has no port forwarding to rely on), and
    # the line it logs once it accepts connections.
    ready_line: str

    def command(self, port: int) -> list[str]:
        raise NotImplementedError


class _Postgres(Service):
    def command(self, port: int) -> list[str]:
        # A cluster made at start (initdb, trust: the container listens on loopback
        # only), durability off as in every test server.
        script = (
            "set -e; /usr/lib/postgresql/15/bin/initdb -D /tmp/pgdata -U postgres --auth=trust -E UTF8 >/dev/null; "
            f"exec /usr/lib/postgresql/15/bin/postgres -D /tmp/pgdata -p {port} -c listen_addresses=127.0.0.1 "
            "-c unix_socket_directories=/tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        return ["bash", "-c", script]


class _Redis(Service):
    def command(self, port: int) -> list[str]:
        return ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


POSTGRES = _Postgres("postgres", ("postgresql-15",), "postgres", "database system is ready to accept connections")
REDIS = _Redis("redis", ("redis-server",), "redis", "Ready to accept connections")
# Bumped when the recipe below changes in a way its text does not show.
RECIPE_VERSION = "v1"


def _containerfile(service: Service, base: str) -> str:
    return (
        f"FROM {base}\n"
        "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        f"{' '.join(service.packages)} >/dev/null && rm -rf /var/lib/apt/lists/*\n"
    )


def image_reference(service: Service, base: str) -> str:
    key = hashlib.sha256(f"{RECIPE_VERSION}\0{_containerfile(service, base)}".encode()).hexdigest()[:12]
    return f"localhost/courseschool-{service.name}:{key}"


@contextlib.contextmanager
def _lock(name: str) -> Iterator[None]:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def service_image(engine: Engine, service: Service) -> tuple[str, bool]:
    """The image of `service` (built now if the engine lacks it) and whether it was built now."""
    base = base_image(engine)
    reference = image_reference(service, base)
    with _lock(f"image-{service.name}"):
        if engine.image_exists(reference):
            return reference, False
        with tempfile.TemporaryDirectory(prefix=f"cs-{service.name}-image-") as context:
            (Path(context) / "Containerfile").write_text(_containerfile(service, base))
            log = CACHE_DIR / f"last-{service.name}-build.log"
            built = subprocess.run(
                [engine.binary, "build", "--network", "host", "-t", reference, "-f", "Containerfile", context],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
                stdin=subprocess.DEVNULL,
                cwd=context,
            )
            log.write_text(built.stdout + built.stderr)
            if built.returncode != 0:
                raise RuntimeError(f"building {reference} failed (log: {log}): {(built.stdout + built.stderr)[-2000:]}")
    return reference, True


if __name__ == "__main__":
    # `python -m tests.containers.service_images`: the base and both images made ahead
    # (.ci/run starts it beside `make check`); whatever happens here, the fixtures do
    # what they always do.
    found, why = find_engine()
    if found is None:
        print(f"test server images: not made here ({why})")
    else:
        for service in (POSTGRES, REDIS):
            try:
                reference, now = service_image(found, service)
                print(f"test server image: {reference} ({'built now' if now else 'cached'})")
            except BaseException as exc:
                print(f"test server image {service.name}: not made ahead ({type(exc).__name__}: {str(exc)[-300:]})")
