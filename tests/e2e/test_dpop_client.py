"""DPoP (RFC 9449) through a real client library: panva's oauth4webapi, unmodified,
pinned in tests/clients/package.json, runs tests/clients/dpop_flow.mjs against the running
platform. The person's step is played here by `Human`: the script prints the
authorization URL, the person approves, and the redirect goes back to the script.

The flow: discovery, registration with `dpop_bound_access_tokens`, a code bound to the
key (`dpop_jkt`), the exchange with a proof (`token_type: DPoP`), the resource API and
UserInfo with DPoP, the bound token sent as Bearer (refused, with both challenges), a
refresh with the same key, a refresh with another key (refused, consuming nothing), and
once more with the server asking for nonces (the library's `use_dpop_nonce` retry).
Without node and npm the tests skip and say so; `npm ci` runs when node_modules/ is
missing."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..support.dpop_proofs import DpopKey
from ..support.npm import npm_ci
from ..support.oauth_client import Human
from .conftest import CallbackServer, Platform, running_platform

# pytest-xdist: one worker: `npm ci` runs in tests/clients/, a folder of the repository.
pytestmark = pytest.mark.xdist_group("npm-clients")
CLIENTS = Path(__file__).resolve().parents[1] / "clients"
STEP_TIMEOUT = 60.0


@pytest.fixture(scope="session")
def node() -> str:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm and node are not installed: the DPoP client test needs Node 20 (tests/clients/package.json)")
    npm_ci(CLIENTS, CLIENTS / "node_modules" / ".package-lock.json")
    return node


def test_the_lock_file_names_no_registry_and_pins_exact_versions() -> None:
    lock = (CLIENTS / "package-lock.json").read_text()
    assert '"resolved"' not in lock and not re.search(r'"[a-z+]+://[^"]*registry', lock)
    assert "omit-lockfile-registry-resolved=true" in (CLIENTS / ".npmrc").read_text()
    pinned = json.loads((CLIENTS / "package.json").read_text())["devDependencies"]
    assert all(version[0].isdigit() for version in pinned.values()), pinned


async def run_client(node: str, platform: Platform, callback_server: CallbackServer) -> dict[str, dict[str, Any]]:
    """Run the script to its end, playing the person when it asks; its steps by name."""
    script = await asyncio.create_subprocess_exec(
        node,
        "dpop_flow.mjs",
        platform.base_url,
        callback_server.url,
        cwd=CLIENTS,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert script.stdin is not None and script.stdout is not None and script.stderr is not None
    steps: dict[str, dict[str, Any]] = {}
    try:
        while "done" not in steps:
            line = await asyncio.wait_for(script.stdout.readline(), STEP_TIMEOUT)
            if not line:
                problem = (await script.stderr.read()).decode(errors="replace")
                pytest.fail(f"the client stopped after {list(steps)}:\n{problem[-4000:]}")
            step = json.loads(line)
            steps[step["step"]] = step
            if step["step"] == "authorize":
                async with Human(platform.base_url) as human:
                    location = await human.authorize(step["url"], email=platform.email, password=platform.password)
                    await human.follow_to_callback(location)
                script.stdin.write(location.encode() + b"\n")
                await script.stdin.drain()
        assert await asyncio.wait_for(script.wait(), STEP_TIMEOUT) == 0
    finally:
        if script.returncode is None:
            script.kill()
            await script.wait()
    return steps


def assert_the_flow(steps: dict[str, dict[str, Any]]) -> None:
    assert "ES256" in steps["discovered"]["dpop_signing_alg_values_supported"]
    assert steps["registered"]["dpop_bound_access_tokens"] is True
    assert steps["exchanged"]["token_type"] == "dpop" and steps["exchanged"]["refresh"] is True
    assert steps["resource"] == {"step": "resource", "status": 200, "items": 2}
    assert steps["userinfo"]["sub"] and steps["userinfo"]["name"]
    misuse = steps["bearer_misuse"]
    assert misuse["status"] == 401, misuse
    schemes = {c["scheme"]: c for c in misuse["challenges"]}
    assert schemes["bearer"]["error"] == "invalid_token" and "DPoP-bound" in schemes["bearer"]["error_description"]
    assert "ES256" in schemes["dpop"]["algs"].split()
    assert schemes["dpop"]["resource_metadata"].endswith("/.well-known/oauth-protected-resource")
    assert steps["refreshed"]["token_type"] == "dpop" and steps["refreshed"]["rotated"] is True
    assert steps["other_key"] == {"step": "other_key", "status": 400, "error": "invalid_grant"}
    assert steps["refreshed_again"] == {"step": "refreshed_again", "token_type": "dpop", "status": 200}


async def test_oauth4webapi_uses_dpop_end_to_end(
    node: str, platform: Platform, callback_server: CallbackServer
) -> None:
    assert_the_flow(await run_client(node, platform, callback_server))


@pytest.fixture
def nonce_platform(
    platform: Platform,
    database_url: str,
    redis_url: str,
    kek: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Platform]:
    """A second platform on the same database whose servers require DPoP nonces."""
    monkeypatch.setenv("DPOP_NONCE_REQUIRED", "true")
    with running_platform(database_url, redis_url, kek, tmp_path_factory.mktemp("nonce-platform")) as running:
        yield running


async def test_oauth4webapi_retries_with_the_servers_nonce(
    node: str, nonce_platform: Platform, callback_server: CallbackServer
) -> None:
    base = nonce_platform.base_url
    async with httpx.AsyncClient(timeout=15.0) as http:  # the setting took: a proof without nonce is refused
        reg = (await http.post(f"{base}/api/oauth/register", json={"redirect_uris": [callback_server.url]})).json()
        proof = DpopKey().proof("POST", f"{base}/api/oauth/token")
        form = {"grant_type": "refresh_token", "refresh_token": "unknown", "client_id": reg["client_id"]}
        asked = await http.post(f"{base}/api/oauth/token", data=form, headers={"DPoP": proof})
    assert asked.status_code == 400 and asked.json()["error"] == "use_dpop_nonce" and asked.headers["dpop-nonce"]
    assert_the_flow(await run_client(node, nonce_platform, callback_server))
