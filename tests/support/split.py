"""The production topology on loopback: the three services as separate processes, each
started with its production command, behind the nginx gateway of deploy/nginx/nginx.conf.

    with running_topology(database_url, redis_url, kek, folder, nginx) as topology:
        topology.base_url            # the gateway's origin: the issuer, BASE_URL of every service
        topology.services["authz"]   # .address reaches the service directly (/readyz, /healthz)

What an operator does, in the order compose does it (deploy/compose.yaml, deploy/README.md):

1. `python -m courseschool.authz migrate` and `python -m courseschool.resource_api migrate`;
2. the deployment's migration step (`python -m courseschool.platform migrate`, as compose
   and the k8s pods' init step run it), which finds both up to date and registers the resource API's
   introspection client (RS_CLIENT_ID / RS_CLIENT_SECRET);
3. `python -m courseschool.<service> serve --host 127.0.0.1 --port N` for authz, the
   resource API and discovery, each with the environment compose gives it (read from
   compose.yaml: secrets, the origin, the ports and the database/Redis are the test's,
   the compose host names become loopback ports), and the gateway in front;
4. the demo school and its owner with the admin command line
   (`python -m courseschool.authz admin schools create`, `... users create`);
5. demo content in the school's areas, for the tests to read (`courseschool.platform.demo`,
   the library function the all-in-one's demo uses). The resource API learns of the school
   itself, from the authorization server, the first time a token or the catalogue names it.

The database and Redis are the caller's: tests/faults passes servers of its own, which it
stops and starts. Every process is stopped on exit (SIGTERM, then SIGKILL of its process
group after the grace); `Topology.log_tails()` is what a failure shows."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from .deployment import COMPOSE, SERVICES, compose_migration_command, run_gateway
from .net import free_port

OWNER_EMAIL = "owner@split.example.test"
OWNER_PASSWORD = "split correct horse battery staple"
SCHOOL_SLUG = "demo"
READY_TIMEOUT = 40.0
# Seconds a stopping service may take: granian's worker kill timeout (SHUTDOWN_GRACE in
# courseschool.common.cli, 20) plus a margin; the pods' grace period is 30.
STOP_GRACE = 25.0
COMMAND_TIMEOUT = 60.0

# Every test process calls from 127.0.0.1: generous limits (the limits have tests of their own).
TEST_ENV = {
    "authz": {
        "RATE_REGISTER_PER_IP": "10000/60",
        "RATE_TOKEN_PER_IP": "10000/60",
        "RATE_TOKEN_PER_CLIENT": "10000/60",
        "RATE_LOGIN_PER_IP": "10000/60",
        "RATE_AUTHORIZE_PER_IP": "10000/60",
    },
}
_COMPOSE_HOST = re.compile(r"http://(authz|resource-api|discovery):(\d+)")
_SECRETS = ("INTERNAL_TOKEN", "KEY_ENCRYPTION_KEY", "ADMIN_TOKEN", "RS_CLIENT_SECRET")


def _settings_names() -> set[str]:
    """Every environment variable a service reads: none may leak in from the caller's shell."""
    import msgspec

    from courseschool.authz.settings import AuthzSettings
    from courseschool.discovery.settings import DiscoverySettings
    from courseschool.resource_api.settings import ResourceSettings

    return {
        f.name.upper()
        for cls in (AuthzSettings, ResourceSettings, DiscoverySettings)
        for f in msgspec.structs.fields(cls)
    } | {"DATA_DIR", "DEMO_EMAIL", "DEMO_PASSWORD", "RS_CLIENT_ID", "HOST", "PORT"}


def tail(path: Path, limit: int = 6000) -> str:
    text = path.read_text(errors="replace") if path.exists() else "(no log)"
    return text[-limit:]


@dataclass
class Service:
    """One service process: `python -m courseschool.<package> serve` on a loopback port."""

    name: str  # compose / gateway name
    package: str
    port: int
    env: dict[str, str]
    log_path: Path
    cwd: Path
    python: str = sys.executable  # the interpreter that serves (the bench's: the shipped packages)
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            f"courseschool.{self.package}",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, f"{self.name} is running"
        with self.log_path.open("ab") as log:
            # A session of its own: granian's workers can be killed with it if it hangs.
            self.process = subprocess.Popen(
                self.command,
                env=self.env,
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self) -> None:
        """SIGTERM, as Kubernetes and `docker compose stop` send it."""
        if self.running():
            assert self.process is not None
            self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = STOP_GRACE) -> int | None:
        """The exit code, or None if it had to be killed (with its workers) after `timeout`."""
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            return None

    def stop(self, timeout: float = STOP_GRACE) -> int | None:
        self.terminate()
        return self.wait(timeout)

    def tail(self, limit: int = 6000) -> str:
        return tail(self.log_path, limit)


@dataclass
class Topology:
    base_url: str  # the gateway's origin
    email: str
    password: str
    services: dict[str, Service]
    gateway: dict[str, Any]
    database_url: str
    redis_url: str
    school: dict[str, Any] = field(default_factory=dict)
    owner: dict[str, Any] = field(default_factory=dict)
    setup_log: Path | None = None

    def address(self, name: str) -> str:
        return self.services[name].address

    def log_tails(self, limit: int = 4000) -> str:
        parts = [
            f"----- {s.name} ({' '.join(s.command[1:])}; exit {s.process.poll() if s.process else '-'}) "
            f"{s.log_path} -----\n{s.tail(limit)}"
            for s in self.services.values()
        ]
        for key in ("error_log", "access_log"):
            path = self.gateway.get(key)
            if isinstance(path, Path):
                parts.append(f"----- gateway {key} -----\n{tail(path, limit // 2)}")
        if self.setup_log is not None:
            parts.append(f"----- operator commands -----\n{tail(self.setup_log, limit // 2)}")
        return "\n".join(parts)


def compose_environment(
    name: str,
    *,
    ports: Mapping[str, int],
    base_url: str,
    database_url: str,
    redis_url: str,
    values: Mapping[str, str],
) -> dict[str, str]:
    """The environment compose.yaml gives service `name`, for this machine: the URLs of
    Postgres and Redis and every secret are ours, compose host names become loopback
    ports, everything else (LOG_FORMAT, FORWARDED_ALLOW_IPS, TOKEN_VALIDATION, the
    inert URLs of discovery, ...) is taken as compose writes it."""
    compose = yaml.safe_load(COMPOSE.read_text())
    env: dict[str, str] = {}
    for key, raw in (compose["services"][name].get("environment") or {}).items():
        value = str(raw)
        if key == "BASE_URL":
            value = base_url
        elif key == "DATABASE_URL" and "@postgres:" in value:
            value = database_url
        elif key == "REDIS_URL" and value.startswith("redis://redis:"):
            value = redis_url
        elif key in _SECRETS:
            value = values[key]
        elif key == "DEV":
            value = "0"  # real secrets above: the production topology runs without the demo mode
        else:
            value = _COMPOSE_HOST.sub(lambda m: f"http://127.0.0.1:{ports[m.group(1)]}", value)
        assert "${" not in value and not _COMPOSE_HOST.search(value), (
            f"compose.yaml: {name}.{key}={raw!r} is new to tests/support/split.py; say what it is on loopback"
        )
        env[key] = value
    return env


def _child_env(extra: Mapping[str, str]) -> dict[str, str]:
    names = _settings_names()
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def _run_all(commands: list[tuple[list[str], dict[str, str]]], log: Path, cwd: Path) -> list[str]:
    """Run commands side by side, as an operator's shell would one after the other;
    their output goes to `log` too. Fails the test, with the output, on a non-zero exit."""
    procs = [
        subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        for cmd, env in commands
    ]
    outputs = []
    for (cmd, _), proc in zip(commands, procs, strict=False):
        try:
            out, err = proc.communicate(timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        shown = shlex.join(["python", *cmd[1:]])
        with log.open("a") as f:
            f.write(
                f"$ {shown}\n{out.decode(errors='replace')}{err.decode(errors='replace')}[exit {proc.returncode}]\n"
            )
        if proc.returncode != 0:
            pytest.fail(f"`{shown}` failed ({proc.returncode}):\n{out.decode()[-3000:]}\n{err.decode()[-3000:]}")
        outputs.append(out.decode())
    return outputs


def _admin(env: dict[str, str], log: Path, cwd: Path, *args: str) -> Any:
    (out,) = _run_all([([sys.executable, "-m", "courseschool.authz", "admin", "--json", *args], env)], log, cwd)
    return json.loads(out)


def _seed_catalogue(database_url: str, school_id: str, slug: str, owner_id: str) -> None:
    """Demo content in the school's areas (see the module's docstring, step 5)."""
    from courseschool.common.db import create_pool
    from courseschool.platform.demo import seed_demo

    async def run() -> None:
        pool = await create_pool(database_url, min_size=1, max_size=1)
        try:
            await seed_demo(pool, school_id=school_id, slug=slug, owner_id=owner_id)
        finally:
            await pool.close()

    # A thread of its own, so callers with a running loop (async tests, bench/topology.py) can use it.
    with concurrent.futures.ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, run()).result()


def wait_until_ready(topology: Topology, timeout: float = READY_TIMEOUT) -> None:
    """Every service's /readyz answers 200 on its own port (as the kubelet and compose's
    healthchecks ask it), and the gateway serves discovery's metadata with its own
    origin as the issuer."""
    deadline = time.monotonic() + timeout
    last: dict[str, str] = {}
    with httpx.Client(timeout=3.0) as http:
        while True:
            for name, service in topology.services.items():
                if not service.running():
                    pytest.fail(
                        f"{name} exited early ({service.process and service.process.poll()}):\n{topology.log_tails()}"
                    )
                if last.get(name) == "ok":
                    continue
                try:
                    answer = http.get(f"{service.address}/readyz")
                    last[name] = "ok" if answer.status_code == 200 else f"{answer.status_code} {answer.text[:200]}"
                except httpx.HTTPError as exc:
                    last[name] = repr(exc)
            if all(last.get(name) == "ok" for name in topology.services):
                try:
                    meta = http.get(f"{topology.base_url}/.well-known/oauth-authorization-server")
                    if meta.status_code == 200 and meta.json()["issuer"] == topology.base_url:
                        return
                    last["gateway"] = f"{meta.status_code} {meta.text[:200]}"
                except httpx.HTTPError as exc:
                    last["gateway"] = repr(exc)
            if time.monotonic() > deadline:
                pytest.fail(f"not ready after {timeout:.0f} s: {last}\n{topology.log_tails()}")
            time.sleep(0.1)


@contextlib.contextmanager
def running_topology(
    database_url: str,
    redis_url: str,
    kek: str,
    folder: Path,
    nginx_binary: str,
    *,
    overrides: Mapping[str, Mapping[str, str]] | None = None,
    python: str = sys.executable,
) -> Iterator[Topology]:
    """The three services and the gateway, set up as the module's docstring says, on a
    fresh database (the school and its owner are created, not looked up). `overrides`
    adds or replaces environment variables per service (compose names), e.g.
    {"resource-api": {"TOKEN_VALIDATION": "introspection"}}. `python` serves the three
    services (the migrations and the operator's commands run on this process's own)."""
    folder.mkdir(parents=True, exist_ok=True)
    setup_log = folder / "operator.log"
    ports = {name: free_port() for name in SERVICES}
    values = {
        "INTERNAL_TOKEN": secrets.token_urlsafe(32),
        "KEY_ENCRYPTION_KEY": kek,
        "ADMIN_TOKEN": secrets.token_urlsafe(32),
        "RS_CLIENT_SECRET": secrets.token_urlsafe(32),
    }
    with run_gateway(nginx_binary, ports) as gateway:
        base_url = f"http://127.0.0.1:{gateway['port']}"

        def env_of(name: str) -> dict[str, str]:
            env = compose_environment(
                name, ports=ports, base_url=base_url, database_url=database_url, redis_url=redis_url, values=values
            )
            return _child_env({**env, **TEST_ENV.get(name, {}), **(overrides or {}).get(name, {})})

        services = {
            name: Service(
                name=name,
                package=package,
                port=ports[name],
                env=env_of(name),
                log_path=folder / f"{name}.log",
                cwd=folder,
                python=python,
            )
            for name, (package, _) in SERVICES.items()
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
            # 1. each service's own migrations (discovery has none)
            _run_all(
                [
                    ([sys.executable, "-m", f"courseschool.{services[n].package}", "migrate"], services[n].env)
                    for n in ("authz", "resource-api")
                ],
                setup_log,
                folder,
            )
            # 2. the deployment's migration step: nothing left to migrate, the RS client registered
            (out,) = _run_all([(compose_migration_command(), env_of("migrate"))], setup_log, folder)
            assert "authz: up to date" in out and "resource_api: up to date" in out, out
            assert f"introspection client {services['resource-api'].env['RS_CLIENT_ID']}: registered" in out, out
            # 3. the services (they start while the operator goes on)
            for service in services.values():
                service.start()
            # 4. the school and its owner, with the admin command line
            admin_env = services["authz"].env
            topology.school = _admin(
                admin_env, setup_log, folder, "schools", "create", "--slug", SCHOOL_SLUG, "--name", "Demo Course School"
            )
            topology.owner = _admin(
                admin_env,
                setup_log,
                folder,
                "users",
                "create",
                "--school",
                SCHOOL_SLUG,
                "--email",
                OWNER_EMAIL,
                "--name",
                "Demo Owner",
                "--role",
                "owner",
                "--password",
                OWNER_PASSWORD,
            )
            # 5. demo content in the school's areas
            _seed_catalogue(database_url, topology.school["id"], SCHOOL_SLUG, topology.owner["id"])
            wait_until_ready(topology)
            yield topology
            # A crash during the tests must not pass unnoticed (a test may stop a service, with 0).
            codes = {name: service.process.poll() for name, service in services.items() if service.process}
            crashed = {name: code for name, code in codes.items() if code not in (None, 0)}
            assert not crashed, f"a service died during the tests {crashed}:\n{topology.log_tails()}"
        finally:
            for service in services.values():
                service.terminate()
            for service in services.values():
                service.wait()


def attach_log_tails(item: pytest.Item, report: pytest.TestReport) -> None:
    """For a `pytest_runtest_makereport` hook wrapper in a suite's conftest.py: a failed
    test that used a Topology gets the tail of each of its processes' logs in its report."""
    if not report.failed:
        return
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, Topology):
            report.sections.append((f"topology logs ({report.when})", value.log_tails()))
