"""The production topology in containers: the migration step and the three services
each in a container of the project's image, run as deploy/compose.yaml runs them, behind
the shipped gateway (deploy/nginx/nginx.conf on Debian's nginx, its upstreams.conf
pointing at the containers).

What differs from compose, and why: the containers share the host's network
(`--network host`: these machines have no container bridge, and the database and Redis
are the machine's), so each service listens on a free loopback port instead of 0.0.0.0
with its compose port, and the compose host names become those ports. Everything else
is read from compose.yaml: each service's command, environment (secrets, the origin, the
database and Redis are the test's, as in tests/support/split.py) and hardening (read-only root,
tmpfs /tmp, every capability dropped, no-new-privileges, uid 10001). The school and its
owner are made with the admin command line inside the authz container (`exec`), as an
operator of compose would."""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support.deployment import COMPOSE, SERVICES, run_gateway
from ..support.net import free_port
from ..support.split import (
    OWNER_EMAIL,
    OWNER_PASSWORD,
    SCHOOL_SLUG,
    STOP_GRACE,
    TEST_ENV,
    Service,
    Topology,
    _child_env,
    _seed_catalogue,
    compose_environment,
    wait_until_ready,
)
from .engine import Engine

COMMAND_TIMEOUT = 120


def compose_service(name: str) -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())["services"][name]


def hardening_flags(name: str) -> list[str]:
    """The `run` flags for compose's hardening of service `name`, read from compose.yaml
    (so the tier and compose stay in step). podman's --read-only also mounts tmpfs on
    /run, /var/tmp and /dev/shm unless told not to; compose (Docker) mounts only /tmp."""
    service = compose_service(name)
    assert service["read_only"] is True, name
    flags = ["--read-only", "--read-only-tmpfs=false"]
    for path in service["tmpfs"]:
        flags += ["--tmpfs", path]
    for cap in service["cap_drop"]:
        flags += ["--cap-drop", cap]
    for option in service["security_opt"]:
        flags += ["--security-opt", option.removesuffix(":true")]
    flags += ["--user", service["user"]]
    return flags


def serve_command(name: str, port: int) -> list[str]:
    """compose's command for service `name`, listening on loopback `port`."""
    command = list(compose_service(name)["command"])
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = str(port)
    return command


@dataclass
class ContainerService(Service):
    """A service in a container: `<engine> run` in the foreground, so its exit code is
    the container's and a SIGTERM to it reaches the service (the engine proxies it)."""

    engine: Engine | None = None
    image: str = ""
    container: str = ""
    settings: list[str] = field(default_factory=list)  # passed by name: no secret in argv

    @property
    def command(self) -> list[str]:
        assert self.engine is not None
        env_flags = [flag for key in self.settings for flag in ("--env", key)]
        return [
            self.engine.binary,
            "run",
            "--rm",
            "--name",
            self.container,
            "--network",
            "host",
            "--stop-timeout",
            str(int(STOP_GRACE)),
            *hardening_flags(self.name),
            *env_flags,
            self.image,
            *serve_command(self.name, self.port),
        ]

    def exec(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A command in the running container (its user and environment)."""
        assert self.engine is not None
        return self.engine.run("exec", self.container, *args, timeout=COMMAND_TIMEOUT, check=check)

    def stop_container(self, timeout: float = STOP_GRACE) -> int | None:
        """`<engine> stop` (SIGTERM, SIGKILL after the grace), as `compose stop` does; the exit code."""
        assert self.engine is not None
        self.engine.run("stop", "--time", str(int(timeout)), self.container, check=False, timeout=timeout + 30)
        return self.wait(timeout)

    def wait(self, timeout: float = STOP_GRACE) -> int | None:
        code = super().wait(timeout)
        if code is None and self.engine is not None:  # the client was killed: the container may live on
            self.engine.run("rm", "--force", self.container, check=False, timeout=60)
        return code


def _settings(name: str, env: Mapping[str, str]) -> list[str]:
    return sorted({*compose_environment_keys(name), *TEST_ENV.get(name, {})} & set(env))


def compose_environment_keys(name: str) -> set[str]:
    return set(compose_service(name).get("environment") or {})


def run_once(engine: Engine, image: str, name: str, env: dict[str, str], log: Path) -> str:
    """A one-shot container of compose service `name` (its command, environment and
    hardening); its output, or the test fails with it."""
    command = [
        engine.binary,
        "run",
        "--rm",
        "--network",
        "host",
        *hardening_flags(name),
        *[flag for key in _settings(name, env) for flag in ("--env", key)],
        image,
        *compose_service(name)["command"],
    ]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL
    )
    with log.open("a") as f:
        f.write(f"$ {engine.name} run ... {' '.join(compose_service(name)['command'])}\n")
        f.write(f"{result.stdout}{result.stderr}[exit {result.returncode}]\n")
    if result.returncode != 0:
        pytest.fail(
            f"the {name} container failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout + result.stderr


def admin(service: ContainerService, *args: str) -> Any:
    """The admin command line inside the authz container."""
    result = service.exec("python", "-m", "courseschool.authz", "admin", "--json", *args, check=False)
    if result.returncode != 0:
        pytest.fail(f"`admin {' '.join(args[:2])}` failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def new_service(
    engine: Engine, image: str, name: str, env: dict[str, str], folder: Path, *, label: str = "", port: int = 0
) -> ContainerService:
    """A container of compose service `name` (not started) on `port` (0: a free one)."""
    package, _ = SERVICES[name]
    tag = label or name
    return ContainerService(
        name=name,
        package=package,
        port=port or free_port(),
        env=env,
        log_path=folder / f"{tag}.log",
        cwd=folder,
        engine=engine,
        image=image,
        container=f"cs-test-{uuid.uuid4().hex[:8]}-{tag}",
        settings=_settings(name, env),
    )


@contextlib.contextmanager
def running_containers(
    engine: Engine, image: str, database_url: str, redis_url: str, kek: str, folder: Path, nginx_binary: str
) -> Iterator[Topology]:
    """migrate, then authz, resource-api and discovery in containers, the gateway in front,
    the demo school and its owner made; every container stopped and removed on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    setup_log = folder / "operator.log"
    values = {
        "INTERNAL_TOKEN": secrets.token_urlsafe(32),
        "KEY_ENCRYPTION_KEY": kek,
        "ADMIN_TOKEN": secrets.token_urlsafe(32),
        "RS_CLIENT_SECRET": secrets.token_urlsafe(32),
    }
    ports = {name: free_port() for name in SERVICES}
    with run_gateway(nginx_binary, ports) as gateway:
        base_url = f"http://127.0.0.1:{gateway['port']}"

        def env_of(name: str) -> dict[str, str]:
            env = compose_environment(
                name, ports=ports, base_url=base_url, database_url=database_url, redis_url=redis_url, values=values
            )
            return _child_env({**env, **TEST_ENV.get(name, {})})

        services: dict[str, Service] = {
            name: new_service(engine, image, name, env_of(name), folder, port=ports[name]) for name in SERVICES
        }
        topology = Topology(
            base_url=base_url,
            email=OWNER_EMAIL,
            password=OWNER_PASSWORD,
            services=services,
            gateway=gateway,
            database_url=database_url,
            redis_url=redis_url,
            setup_log=setup_log,
        )
        try:
            out = run_once(engine, image, "migrate", env_of("migrate"), setup_log)
            assert "introspection client resource-api: registered" in out, out
            for service in services.values():
                service.start()
            authz = services["authz"]
            assert isinstance(authz, ContainerService)
            wait_until_ready(topology)
            topology.school = admin(authz, "schools", "create", "--slug", SCHOOL_SLUG, "--name", "Demo Course School")
            topology.owner = admin(
                authz,
                *("users", "create", "--school", SCHOOL_SLUG, "--email", OWNER_EMAIL, "--name", "Demo Owner"),
                *("--role", "owner", "--password", OWNER_PASSWORD),
            )
            _seed_catalogue(database_url, topology.school["id"], SCHOOL_SLUG, topology.owner["id"])
            yield topology
            codes = {name: s.process.poll() for name, s in services.items() if s.process}
            crashed = {name: code for name, code in codes.items() if code not in (None, 0)}
            assert not crashed, f"a container died during the tests {crashed}:\n{topology.log_tails()}"
        finally:
            for service in services.values():
                service.terminate()
            for service in services.values():
                service.wait()
