"""Smoke test of the side-by-side bench's moving parts, against the peer server alone:
it starts, mints single-use inputs through its models, and the Lua scripts see every
answer through (a second pass over spent refresh tokens is reported, not counted as
throughput). No timing is asserted. Skipped where wrk, Node.js or the peer's pinned
package (`npm ci` in bench/, which `make bench` runs itself) are missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.harness import wrk
from bench.peer import PUBLIC_CLIENT, Peer, installed_version, pinned_version

pytestmark = pytest.mark.skipif(
    not shutil.which("wrk") or not shutil.which("node") or installed_version() != pinned_version(),
    reason="needs wrk, Node.js and the peer installed in bench/node_modules (npm ci in bench/)",
)


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory):
    server = Peer(tmp_path_factory.mktemp("peer") / "peer.log", core=None)
    yield server
    server.stop()


async def test_refresh_lineages_use_each_token_once(peer: Peer, tmp_path: Path) -> None:
    tokens = tmp_path / "refresh.txt"
    tokens.write_text("\n".join(await peer.mint("refresh", 16)) + "\n")
    env = {"TOKENS_FILE": str(tokens), "CLIENT_ID": PUBLIC_CLIENT}
    first = wrk(f"{peer.base}/token", 1, script="refresh.lua", env=env, connections=4, core=None)
    assert first["requests"] > 0 and first["failures"] == 0
    # The same heads again: each was spent, so every answer is refused and counted.
    again = wrk(f"{peer.base}/token", 1, script="refresh.lua", env=env, connections=4, core=None)
    assert again["failures"] > 0


async def test_codes_and_introspection(peer: Peer, tmp_path: Path) -> None:
    bodies = tmp_path / "codes.txt"
    bodies.write_text("\n".join(await peer.mint("code", 5000)) + "\n")
    exchange = wrk(
        f"{peer.base}/token", 1, script="once.lua", env={"BODIES_FILE": str(bodies)}, connections=4, core=None
    )
    assert exchange["requests"] > 0 and exchange["failures"] == 0
    body = tmp_path / "introspection.txt"
    body.write_text(await peer.introspection_body() + "\n")
    introspection = wrk(
        f"{peer.base}/token/introspection",
        1,
        script="introspect.lua",
        env={"BODY_FILE": str(body)},
        connections=4,
        core=None,
    )
    assert introspection["requests"] > 0 and introspection["failures"] == 0
