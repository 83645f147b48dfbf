"""Faults injected into servers the tests start themselves (their own PostgreSQL and
Redis, started like the embedded default): the platform answers fast JSON 503s while
Postgres is down and resumes by itself, starts unready and becomes ready, keeps the
API serving without Redis, and never lets a used code or a revoked token work again,
nor leaves a half-written grant. Every loop is bounded."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import asyncpg
import httpx
import pytest

from courseschool.common.jose import new_kek

from ..e2e.conftest import Platform, running_platform
from ..e2e.support import Human, query_of
from .servers import OwnPostgres, OwnRedis, free_port

CALLBACK = "http://127.0.0.1:9/callback"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[OwnPostgres, OwnRedis, str]]:
    folder = tmp_path_factory.mktemp("fault-servers")
    pg, redis = OwnPostgres(folder / "pg"), OwnRedis(folder)
    try:
        yield pg, redis, new_kek()
    finally:
        pg.close()
        redis.close()


@pytest.fixture(scope="module")
def platform(servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    pg, redis, kek = servers
    with running_platform(pg.dsn, redis.url, kek, tmp_path_factory.mktemp("fault-platform")) as running:
        yield running


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def _code(http: httpx.AsyncClient, platform: Platform, reg: dict) -> tuple[str, str]:
    verifier, challenge = _pkce()
    url = f"{platform.base_url}/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": reg["client_id"], "redirect_uri": CALLBACK,
        "scope": "openid courses:read", "code_challenge": challenge, "code_challenge_method": "S256",
    })
    async with Human(platform.base_url) as human:
        location = await human.authorize(url, email=platform.email, password=platform.password)
    return query_of(location)["code"], verifier


async def _tokens(http: httpx.AsyncClient, platform: Platform) -> tuple[dict, dict, str, str]:
    reg = (await http.post(f"{platform.base_url}/api/oauth/register", json={"redirect_uris": [CALLBACK]})).json()
    code, verifier = await _code(http, platform, reg)
    response = await http.post(f"{platform.base_url}/api/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "client_id": reg["client_id"],
        "code_verifier": verifier,
    })
    assert response.status_code == 200, response.text
    return reg, response.json(), code, verifier


async def _refresh(http: httpx.AsyncClient, platform: Platform, reg: dict, token: str) -> httpx.Response:
    return await http.post(f"{platform.base_url}/api/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": token, "client_id": reg["client_id"],
    })


async def _until(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.2)
    return False


async def _no_half_written_grants(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        orphan_codes = await conn.fetchval("""
            SELECT count(*) FROM authz_codes c JOIN authz_grants g ON g.id = c.grant_id
            JOIN authz_clients k ON k.client_id = g.client_id
            WHERE c.consumed_at IS NOT NULL AND 'refresh_token' = ANY (k.grant_types)
              AND NOT EXISTS (SELECT 1 FROM authz_refresh_tokens r WHERE r.grant_id = c.grant_id)""")
        orphan_rotations = await conn.fetchval("""
            SELECT count(*) FROM authz_refresh_tokens r WHERE r.replaced_by IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM authz_refresh_tokens n WHERE n.token_hash = r.replaced_by)""")
    finally:
        await conn.close()
    assert orphan_codes == 0 and orphan_rotations == 0


async def test_postgres_outage_gives_fast_503s_and_service_resumes(servers, platform: Platform) -> None:
    pg, _, _ = servers
    base = platform.base_url
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, _, _ = await _tokens(http, platform)
        latest = {"refresh": tokens["refresh_token"]}
        statuses: list[int] = []

        async def traffic() -> None:
            for _ in range(60):  # bounded, and under the per-client rate limit
                response = await _refresh(http, platform, reg, latest["refresh"])
                statuses.append(response.status_code)
                if response.status_code == 200:
                    latest["refresh"] = response.json()["refresh_token"]
                await asyncio.sleep(0.1)

        running = asyncio.create_task(traffic())
        await asyncio.sleep(0.3)
        pg.stop()
        try:
            started = time.monotonic()
            refused = await _refresh(http, platform, reg, latest["refresh"])
            assert refused.status_code == 503 and refused.json()["error"] == "temporarily_unavailable"
            assert time.monotonic() - started < 2.0
            assert (await http.get(f"{base}/readyz")).status_code == 503
            assert (await http.get(f"{base}/healthz")).status_code == 200
            catalogue = await http.get(f"{base}/api/v1/courses?school=demo")
            assert catalogue.status_code == 503 and catalogue.headers["content-type"] == "application/json"
            await asyncio.sleep(0.5)
        finally:
            pg.start()
        assert await _until(lambda: _ready(http, base), 15)
        await running
        assert 503 in statuses and all(s in (200, 503) for s in statuses), sorted(set(statuses))
        assert statuses[-1] == 200
        assert (await _refresh(http, platform, reg, latest["refresh"])).status_code == 200
    await _no_half_written_grants(pg.dsn)


async def _ready(http: httpx.AsyncClient, base: str) -> bool:
    try:
        return (await http.get(f"{base}/readyz")).status_code == 200
    except httpx.HTTPError:
        return False


async def test_authz_started_while_postgres_is_down_becomes_ready_by_itself(servers, platform: Platform, tmp_path: Path) -> None:
    pg, redis, kek = servers
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DATABASE_URL": pg.dsn, "REDIS_URL": redis.url, "KEY_ENCRYPTION_KEY": kek,
           "BASE_URL": platform.base_url, "LOG_FORMAT": "json"}
    pg.stop()
    process = subprocess.Popen(
        [sys.executable, "-m", "courseschool.authz", "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "authz.log").open("wb"),
    )
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            async def alive() -> bool:
                try:
                    return (await http.get(f"{base}/healthz")).status_code == 200
                except httpx.HTTPError:
                    return False

            assert await _until(alive, 20), (tmp_path / "authz.log").read_text()[-3000:]
            assert (await http.get(f"{base}/readyz")).status_code == 503
            keys = await http.get(f"{base}/api/oauth/jwks")
            assert keys.status_code == 503 and keys.json()["error"] == "temporarily_unavailable"
            pg.start()
            assert await _until(lambda: _ready(http, base), 15)

            async def keys_loaded() -> bool:
                return (await http.get(f"{base}/api/oauth/jwks")).status_code == 200

            assert await _until(keys_loaded, 10)
    finally:
        if pg_stopped(pg):
            pg.start()
        process.terminate()
        process.wait(15)


def pg_stopped(pg: OwnPostgres) -> bool:
    return not (pg.folder / "postmaster.pid").exists()


async def test_without_redis_the_api_keeps_serving_and_nothing_revoked_comes_back(servers, platform: Platform) -> None:
    _, redis, _ = servers
    base = platform.base_url
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, code, verifier = await _tokens(http, platform)
        _, revoked_tokens, _, _ = await _tokens(http, platform)
        revoked = await http.post(f"{base}/api/oauth/revoke", data={
            "token": revoked_tokens["refresh_token"], "client_id": revoked_tokens and reg["client_id"]})
        assert revoked.status_code == 200
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 200
        redis.stop()
        try:
            started = time.monotonic()
            assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 200
            assert (await http.get(f"{base}/api/v1/courses?school=demo")).status_code == 200
            assert (await http.get(f"{base}/.well-known/oauth-authorization-server")).status_code == 200
            reused = await http.post(f"{base}/api/oauth/token", data={
                "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
                "client_id": reg["client_id"], "code_verifier": verifier})
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
            assert time.monotonic() - started < 10
        finally:
            redis.start()
        async with httpx.AsyncClient(timeout=10) as http2:
            await asyncio.sleep(1.0)
            assert (await http2.get(f"{base}/api/v1/courses", headers=bearer)).status_code in (200, 401)
            # the first grant's token was revoked by the code reuse above: refused everywhere
            assert (await http2.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 401


async def test_paused_redis_keeps_every_call_time_bounded(servers, platform: Platform) -> None:
    _, redis, _ = servers
    base = platform.base_url
    async with httpx.AsyncClient(timeout=15) as http:
        _, tokens, _, _ = await _tokens(http, platform)
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        redis.pause()
        try:
            for path, headers in (("/api/v1/courses", bearer), ("/readyz", {}), ("/oauth/authorize?client_id=x", {})):
                started = time.monotonic()
                response = await http.get(f"{base}{path}", headers=headers)
                assert time.monotonic() - started < 8, path
                assert response.status_code < 500 or response.headers["content-type"].startswith("application/json")
        finally:
            redis.resume()


async def test_flushed_redis_revives_no_used_code_and_no_revoked_token(servers, platform: Platform) -> None:
    _, redis, _ = servers
    base = platform.base_url
    async with httpx.AsyncClient(timeout=10) as http:
        reg, tokens, code, verifier = await _tokens(http, platform)
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        await http.post(f"{base}/api/oauth/revoke", data={"token": tokens["access_token"], "client_id": reg["client_id"]})
        import redis.asyncio as aioredis

        client = aioredis.from_url(redis.url)
        await client.flushall()
        await client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # the feed reconnects and reloads
        await client.aclose()
        await asyncio.sleep(1.0)
        assert (await http.get(f"{base}/api/v1/courses", headers=bearer)).status_code == 401
        reused = await http.post(f"{base}/api/oauth/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
            "client_id": reg["client_id"], "code_verifier": verifier})
        assert reused.status_code == 400
