"""Two server processes sharing Postgres and Redis, as two replicas behind a load
balancer: a code issued by one is redeemed at the other, and the refresh races keep
one lineage and nothing alive after a revocation, whichever replica serves what."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from urllib.parse import urlencode

import httpx

from ..support.oauth_client import Human, pkce_pair, query_of
from .conftest import CallbackServer, Platform, admin_cli


async def _tokens_across(
    a: Platform, b: Platform, callback: CallbackServer, http: httpx.AsyncClient
) -> tuple[dict, dict]:
    """Register and authorize at replica A, redeem the code at replica B."""
    reg = (
        await http.post(
            f"{a.base_url}/api/oauth/register",
            json={
                "client_name": "Replica test",
                "redirect_uris": [callback.url],
            },
        )
    ).json()
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(8)
    url = f"{a.base_url}/oauth/authorize?" + urlencode(
        {
            "response_type": "code",
            "client_id": reg["client_id"],
            "redirect_uri": callback.url,
            "scope": "openid email courses:read",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
        }
    )
    async with Human(a.base_url) as human:
        location = await human.authorize(url, email=a.email, password=a.password)
    query = query_of(location)
    assert query["state"] == state and query["iss"] == a.base_url
    response = await http.post(
        f"{b.address}/api/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": query["code"],
            "redirect_uri": callback.url,
            "client_id": reg["client_id"],
            "code_verifier": verifier,
        },
    )
    assert response.status_code == 200, response.text
    return reg, response.json()


async def _refresh(http: httpx.AsyncClient, at: str, reg: dict, token: str) -> httpx.Response:
    return await http.post(
        f"{at}/api/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": token,
            "client_id": reg["client_id"],
        },
    )


async def _userinfo(http: httpx.AsyncClient, at: str, access_token: str) -> int:
    return (await http.get(f"{at}/api/oauth/userinfo", headers={"Authorization": f"Bearer {access_token}"})).status_code


async def test_code_issued_by_one_replica_is_redeemed_at_the_other(
    platform: Platform, platform_b: Platform, callback_server: CallbackServer
) -> None:
    async with httpx.AsyncClient(timeout=15) as http:
        _, tokens = await _tokens_across(platform, platform_b, callback_server, http)
        assert await _userinfo(http, platform.base_url, tokens["access_token"]) == 200
        assert await _userinfo(http, platform_b.address, tokens["access_token"]) == 200


async def test_parallel_refreshes_across_replicas_keep_one_lineage(
    platform: Platform, platform_b: Platform, callback_server: CallbackServer
) -> None:
    async with httpx.AsyncClient(timeout=15) as http:
        for _ in range(3):
            reg, tokens = await _tokens_across(platform, platform_b, callback_server, http)
            targets = [platform.base_url, platform_b.address] * 4
            results = await asyncio.gather(*(_refresh(http, t, reg, tokens["refresh_token"]) for t in targets))
            assert all(r.status_code == 200 for r in results), [r.text for r in results]
            lineage = {r.json()["refresh_token"] for r in results}
            assert len(lineage) == 1
            (successor,) = lineage
            assert (await _refresh(http, platform_b.address, reg, successor)).status_code == 200


async def test_revocation_racing_refreshes_across_replicas_leaves_nothing_alive(
    platform: Platform, platform_b: Platform, callback_server: CallbackServer
) -> None:
    async with httpx.AsyncClient(timeout=15) as http:
        for _ in range(3):
            reg, tokens = await _tokens_across(platform, platform_b, callback_server, http)
            refreshes = [
                _refresh(http, t, reg, tokens["refresh_token"]) for t in [platform.base_url, platform_b.address] * 3
            ]
            revoke = http.post(
                f"{platform_b.address}/api/oauth/revoke",
                data={
                    "token": tokens["refresh_token"],
                    "client_id": reg["client_id"],
                },
            )
            results = await asyncio.gather(*refreshes[:3], revoke, *refreshes[3:])
            assert all(r.status_code < 500 for r in results)
            assert results[3].status_code == 200
            for body in (r.json() for r in results if r.status_code == 200 and r.content):
                assert (await _refresh(http, platform.base_url, reg, body["refresh_token"])).status_code == 400
                assert await _userinfo(http, platform_b.address, body["access_token"]) == 401
            assert await _userinfo(http, platform.base_url, tokens["access_token"]) == 401


def _header(jwt: str) -> dict:
    head = jwt.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))


def _reloads(p: Platform) -> int:
    """How many times the platform's authorization server reloaded its keys when told."""
    return sum('"event":"signing_keys_reloaded"' in line for line in p.output().splitlines())


async def test_an_immediate_key_rotation_signs_the_next_token_with_the_new_key_on_every_replica(
    platform: Platform,
    platform_b: Platform,
    callback_server: CallbackServer,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """`admin keys rotate --immediate` (a key that must stop signing now) tells every
    running server over Redis; each reloads its keys then, not at its next
    KEY_RELOAD_INTERVAL (60 s), and the next token it issues carries the new kid."""
    replicas = (platform, platform_b)
    async with httpx.AsyncClient(timeout=15) as http:
        reg, tokens = await _tokens_across(platform, platform_b, callback_server, http)
        old = _header(tokens["access_token"])
        reloads = [_reloads(p) for p in replicas]
        out = await asyncio.to_thread(
            admin_cli, database_url, redis_url, kek, "--json", "keys", "rotate", "--alg", old["alg"], "--immediate"
        )
        rotated = json.loads(out)
        (new_kid,) = [k["kid"] for k in rotated["keys"] if k["alg"] == old["alg"] and k["state"] == "active"]
        assert new_kid != old["kid"]
        # Each replica reloads when told (bounded wait: the telling is asynchronous).
        deadline = time.monotonic() + 15
        while any(_reloads(p) <= before for p, before in zip(replicas, reloads, strict=True)):
            assert time.monotonic() < deadline, "a replica was not told of the rotation"
            await asyncio.sleep(0.1)
        latest = tokens["refresh_token"]
        for replica in replicas:
            at = replica.address
            keys = (await http.get(f"{at}/api/oauth/jwks")).json()["keys"]
            assert new_kid in {k["kid"] for k in keys}
            refreshed = await _refresh(http, at, reg, latest)
            assert refreshed.status_code == 200, refreshed.text
            latest = refreshed.json()["refresh_token"]
            access = refreshed.json()["access_token"]
            assert _header(access)["kid"] == new_kid, (replica.address, _header(access))
            assert await _userinfo(http, at, access) == 200
        assert rotated["servers_told"] >= len(replicas)  # both replicas (and any other server on this Redis)
