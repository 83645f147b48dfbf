"""The deployment artefacts under deploy/ as the tests use them: the service table, the
tools they run (nginx, hadolint, ...), the nginx gateway of deploy/nginx/nginx.conf run
live on loopback, and the migration step of compose/the k8s init step.

Shared by tests/deploy (the artefacts checked with the real tools, in front of stub
upstreams) and tests/support/split.py (the three real services behind the real gateway)."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .net import free_port

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
NGINX_CONF = DEPLOY / "nginx" / "nginx.conf"
COMPOSE = DEPLOY / "compose.yaml"

# The three services: the name used by compose, the k8s Deployment/Service and the
# gateway; the Python package; the port.
SERVICES = {
    "authz": ("authz", 8001),
    "resource-api": ("resource_api", 8002),
    "discovery": ("discovery", 8003),
}

NGINX_MISSING = "nginx is not installed (Debian: apt-get install nginx; .ci/run does it on CI)"


def find_tool(name: str) -> str | None:
    """A tool on PATH, in this virtualenv's bin, or in /usr/sbin (Debian's nginx)."""
    for candidate in (shutil.which(name), Path(sys.executable).parent / name, Path("/usr/sbin") / name):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def nginx_or_skip() -> str:
    found = find_tool("nginx")
    if found is None:
        pytest.skip(NGINX_MISSING)
    return found


def _substitute(text: str, pattern: str, replacement: str) -> str:
    new, count = re.subn(pattern, replacement, text)
    assert count >= 1, f"nginx.conf changed: {pattern!r} not found; update tests/support/deployment.py"
    return new


# The variable nginx.conf proxies each service's locations to (set in upstreams.conf).
UPSTREAM_VARIABLES = {
    "authz": "$authz_upstream",
    "resource-api": "$resource_upstream",
    "discovery": "$discovery_upstream",
}


def upstreams_conf(addresses: dict[str, str], resolver: str | None = None) -> str:
    """An upstreams.conf for nginx.conf: {compose service name: "host:port"}; a resolver
    only where the hosts are names."""
    lines = [f"resolver {resolver} valid=10s ipv6=off;"] if resolver else []
    lines += [f"set {UPSTREAM_VARIABLES[name]} http://{addresses[name]};" for name in SERVICES]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def run_gateway(nginx_binary: str, upstream_ports: dict[str, int]) -> Iterator[dict[str, object]]:
    """nginx with deploy/nginx/nginx.conf, run on loopback, in front of
    `upstream_ports` ({compose service name: loopback port}).

    The upstream addresses are the setting nginx.conf includes (upstreams.conf next to
    it): here loopback ports instead of the compose host names (IP literals need no
    resolver). The copy of nginx.conf differs from the file only where a run on a shared
    machine must: listening ports, and the pid, temporary files and logs under a temp
    dir. The temp dir is world-traversable: run as root, nginx's workers run as `nobody`
    and buffer request bodies there. Yields {"port", "health_port", "error_log",
    "access_log"}; the logs exist while the gateway runs."""
    tmp = Path(tempfile.mkdtemp(prefix="cs-nginx-"))
    tmp.chmod(0o755)
    port, health_port = free_port(), free_port()
    conf = NGINX_CONF.read_text()
    conf = _substitute(conf, r"listen 8000 default_server;", f"listen 127.0.0.1:{port} default_server;")
    conf = _substitute(conf, r"listen 127\.0\.0\.1:8081;", f"listen 127.0.0.1:{health_port};")
    conf = _substitute(conf, r"pid /tmp/nginx\.pid;", f"pid {tmp}/nginx.pid;")
    conf = _substitute(conf, r"/tmp/nginx-", f"{tmp}/nginx-")
    conf = _substitute(conf, r"error_log /dev/stderr warn;", f"error_log {tmp}/error.log warn;")
    conf = _substitute(conf, r"access_log /dev/stdout json;", f"access_log {tmp}/access.log json;")
    (tmp / "upstreams.conf").write_text(upstreams_conf({name: f"127.0.0.1:{p}" for name, p in upstream_ports.items()}))
    path = tmp / "nginx.conf"
    path.write_text(conf)
    proc = subprocess.Popen(
        [nginx_binary, "-p", f"{tmp}/", "-c", str(path), "-g", "daemon off;"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (tmp / "error.log").read_text() if (tmp / "error.log").exists() else ""
                # nginx's own output only once it exited: reading a live process's pipe blocks
                output = proc.stdout.read() if proc.stdout and proc.poll() is not None else b""
                pytest.fail(f"nginx did not start: {output.decode(errors='replace')} {log}")
            time.sleep(0.05)
        yield {
            "port": port,
            "health_port": health_port,
            "error_log": tmp / "error.log",
            "access_log": tmp / "access.log",
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


MIGRATION_COMMAND = ["python", "-m", "courseschool.platform", "migrate"]


def compose_migration_command() -> list[str]:
    """The migration step of deploy/compose.yaml (the k8s init step runs the same command; a
    deploy test checks both), with this interpreter for `python`."""
    import yaml

    command = yaml.safe_load(COMPOSE.read_text())["services"]["migrate"]["command"]
    assert command == MIGRATION_COMMAND, command
    return [sys.executable, *command[1:]]


ASGI_MODULE = REPO / "platform" / "src" / "courseschool" / "platform" / "asgi.py"


def documented_granian_commands() -> list[list[str]]:
    """The granian command lines of platform/asgi.py's docstring, as an operator would
    copy them (a line ending in a backslash goes on on the next)."""
    text = ASGI_MODULE.read_text().replace("\\\n", " ")
    return [shlex.split(ln) for ln in text.splitlines() if ln.strip().startswith("granian ")]
