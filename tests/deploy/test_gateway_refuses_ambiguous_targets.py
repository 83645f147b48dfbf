"""Finding 12, at the production gateway (deploy/nginx/nginx.conf, run live in front of
stub upstreams that record what reaches them): nginx picks a location from the
normalised path but passes the raw request target on, so a target whose dot segments
resolve to a public prefix reached a service as a path under /internal or /healthz.
Such ambiguous targets name no endpoint (404 JSON) before any location is picked."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ..support.deployment import SERVICES, nginx_or_skip, run_gateway


class _Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.paths: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Recorder

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        body = json.dumps({"service": self.server.name, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[int, dict[str, _Recorder]]]:
    nginx = nginx_or_skip()
    stubs = {name: _Recorder(name) for name in SERVICES}
    for stub in stubs.values():
        threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        with run_gateway(nginx, {name: stub.server_port for name, stub in stubs.items()}) as running:
            yield int(running["port"]), stubs  # type: ignore[call-overload]
    finally:
        for stub in stubs.values():
            stub.shutdown()
            stub.server_close()


def _get(port: int, target: str) -> tuple[int, dict[str, str], bytes]:
    """GET with the request target exactly as given (no client-side normalisation)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, body


# pytest-xdist: one worker: the module's gateway is started once.
pytestmark = pytest.mark.xdist_group("gateway-paths")
AMBIGUOUS = [
    # normalised to a public prefix, passed on raw: a service saw /internal/..., /healthz/...
    "/internal/schools/demo/../../../oauth/authorize",
    "/internal/metadata/openid-configuration/../../../api/oauth/jwks",
    "/healthz/../oauth/authorize",
    "/internal/schools/x%2f..%2f..%2f..%2foauth%2fauthorize",
    "/internal/schools/%2e%2e/%2E%2E/oauth/authorize",
    # refused as much for what a service might make of them
    "//internal/schools/demo",
    "/./internal/schools/demo",
    "/internal/../internal/schools/demo",
    "/oauth/..%2finternal/schools/demo",
    "/oauth/authorize/.",
    "/oauth/authorize/..?client_id=x",
    "/api/v1//courses",
    "/api/v1/courses%5c..",
    "/oauth\\..\\internal/schools/demo",
]


@pytest.mark.parametrize("target", AMBIGUOUS)
def test_ambiguous_targets_never_reach_a_service(gateway, target: str) -> None:
    port, stubs = gateway
    before = {name: list(stub.paths) for name, stub in stubs.items()}
    status, headers, body = _get(port, target)
    reached = {name: stub.paths[len(before[name]) :] for name, stub in stubs.items()}
    assert not any(reached.values()), f"{target} reached {reached}"
    assert status == 404 and headers["content-type"] == "application/json", (target, status, body)
    assert json.loads(body)["error_description"].startswith("no such endpoint: the request path is ambiguous")


@pytest.mark.parametrize(
    ("target", "service"),
    [
        ("/oauth/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%2F..%2Fcb&x=/../", "authz"),
        ("/api/v1/courses/a.b", "resource-api"),
        ("/api/v1/courses/", "resource-api"),
        ("/.well-known/oauth-authorization-server", "discovery"),
    ],
)
def test_ordinary_targets_are_passed_on_unchanged(gateway, target: str, service: str) -> None:
    port, _ = gateway
    status, _, body = _get(port, target)
    assert status == 200 and json.loads(body) == {"service": service, "path": target}
