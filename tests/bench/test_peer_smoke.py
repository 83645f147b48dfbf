"""Smoke test of the side-by-side bench's moving parts, against the peer servers alone:
oidc-provider on its shipped in-memory adapter and on our Redis adapter (the durable
peer, bench/peer/redis_adapter.mjs, on the test Redis under a key prefix of its own). Each
starts, answers its discovery document, mints single-use inputs through its models, and
the Lua scripts see every answer through (a second pass over spent refresh tokens is
reported, not counted as throughput). For the durable peer, what its adapter must do for
oidc-provider: a refresh token consumed in place, its reuse revoking the whole grant
(revokeByGrantId over the grant's index), every key with a TTL, and nothing of its own
left behind. No timing is asserted. Skipped where wrk or Node.js are missing, or when
`npm ci` in bench/ (which `make bench` runs itself) cannot install the pinned packages."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from bench.harness import wrk
from bench.peer import PUBLIC_CLIENT, Peer, ensure_installed

pytestmark = [
    pytest.mark.skipif(
        not shutil.which("wrk") or not shutil.which("node") or not shutil.which("npm"),
        reason="needs wrk, Node.js and npm (the peer is installed with npm ci in bench/)",
    ),
    # pytest-xdist: one worker, so that one `npm ci` at a time writes bench/node_modules (two
    # workers installing at once left a torn JSON file in a clean-clone run).
    pytest.mark.xdist_group("npm-bench"),
]


@pytest.fixture(scope="module")
def installed() -> None:
    missing = ensure_installed()
    if missing:
        pytest.skip(f"the peer cannot run: {missing}")


@pytest.fixture(scope="module", params=["memory", "redis"])
def peer(request: pytest.FixtureRequest, installed: None, redis_url: str, tmp_path_factory: pytest.TempPathFactory):
    store = request.param
    server = Peer(
        tmp_path_factory.mktemp(f"peer-{store}") / "peer.log",
        core=None,
        redis_url=redis_url if store == "redis" else None,
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def durable(installed: None, redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    server = Peer(tmp_path_factory.mktemp("durable") / "peer.log", core=None, redis_url=redis_url)
    yield server
    server.stop()


def refresh(peer: Peer, token: str) -> httpx.Response:
    return httpx.post(
        f"{peer.base}/token",
        data={"grant_type": "refresh_token", "refresh_token": token, "client_id": PUBLIC_CLIENT},
        timeout=30,
    )


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


def test_the_durable_peer_answers_discovery_and_keeps_its_models_in_redis(durable: Peer, redis_url: str) -> None:
    assert durable.store == "redis"
    answer = httpx.get(f"{durable.base}/.well-known/oauth-authorization-server", timeout=30)
    assert answer.status_code == 200 and answer.json()["issuer"] == durable.base
    client = redis.Redis.from_url(redis_url)
    try:
        assert not list(client.scan_iter(match=f"{durable.prefix}*"))  # a start writes nothing
    finally:
        client.close()


async def test_a_durable_refresh_rotates_and_reuse_revokes_the_grant(durable: Peer, redis_url: str) -> None:
    (first,) = await durable.mint("refresh", 1)
    rotated = refresh(durable, first)
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()["refresh_token"]
    assert second != first and rotated.json()["id_token"]
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        # The spent token is a hash whose `consumed` field was set in place; every key has a TTL.
        spent = f"{durable.prefix}RefreshToken:{first}"
        assert client.type(spent) == "hash" and client.hget(spent, "consumed")
        assert client.hget(f"{durable.prefix}RefreshToken:{second}", "consumed") is None
        keys = list(client.scan_iter(match=f"{durable.prefix}*"))
        assert keys and all(client.ttl(key) > 0 for key in keys)
        grant_lists = [key for key in keys if key.startswith(f"{durable.prefix}grant:")]
        assert grant_lists and all(client.type(key) == "list" for key in grant_lists)
        # The spent token again: refused, and the whole grant revoked through its index,
        # so the token it had rotated to is refused too.
        reused = refresh(durable, first)
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        assert not client.exists(f"{durable.prefix}RefreshToken:{second}")
        after = refresh(durable, second)
        assert after.status_code == 400 and after.json()["error"] == "invalid_grant"
    finally:
        client.close()


async def test_the_durable_peer_deletes_only_its_own_keys(installed: None, redis_url: str, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_url)
    other = "bench-test-not-the-peers"
    client.set(other, "kept", ex=60)
    server = Peer(tmp_path / "peer.log", core=None, redis_url=redis_url)
    try:
        await server.mint("refresh", 3)
        assert list(client.scan_iter(match=f"{server.prefix}*"))
    finally:
        server.stop()
    try:
        assert not list(client.scan_iter(match=f"{server.prefix}*"))
        assert client.get(other) == b"kept"
    finally:
        client.delete(other)
        client.close()
