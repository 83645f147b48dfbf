"""Client libraries as their documentation uses them, unmodified, against the running
platform: requests-oauthlib (whose documented token call sends a public client's id as
HTTP Basic with an empty password), oauthlib's WebApplicationClient with httpx, and
httpx-oauth with `client_secret_basic`. Each gets tokens, calls the API, refreshes; a
client that omits `scope` gets the documented default (RFC 6749 §3.3)."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterator

import httpx
import pytest
from httpx_oauth.oauth2 import OAuth2
from oauthlib.oauth2 import WebApplicationClient
from requests_oauthlib import OAuth2Session

from ..support.oauth_client import SCOPE, Human, discover, pkce_pair, query_of, register
from .conftest import Platform

REDIRECT = "http://127.0.0.1:53682/callback"  # the libraries only read the redirect; nothing listens


@pytest.fixture
def insecure_transport() -> Iterator[None]:
    """oauthlib refuses http:// unless told: the embedded platform is plain loopback HTTP."""
    before = os.environ.get("OAUTHLIB_INSECURE_TRANSPORT")
    os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"
    yield
    if before is None:
        os.environ.pop("OAUTHLIB_INSECURE_TRANSPORT")
    else:
        os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = before


async def _approve(platform: Platform, url: str) -> str:
    async with Human(platform.base_url) as human:
        location = await human.authorize(url, email=platform.email, password=platform.password)
    assert location.startswith(REDIRECT), location
    return location


async def _api_reads_courses(platform: Platform, access_token: str) -> None:
    async with httpx.AsyncClient(base_url=platform.base_url, timeout=15.0) as http:
        response = await http.get("/api/v1/courses", headers={"Authorization": f"Bearer {access_token}"})
    assert response.status_code == 200, response.text


async def test_requests_oauthlib_public_client_as_documented(platform: Platform, insecure_transport: None) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, REDIRECT)
    session = OAuth2Session(reg["client_id"], redirect_uri=REDIRECT, scope=SCOPE.split(), pkce="S256")
    url, state = session.authorization_url(meta["authorization_endpoint"])
    callback = await _approve(platform, url)
    assert f"state={state}" in callback
    # The documented call: no client_secret, so the library sends Authorization: Basic base64(id:).
    token = await asyncio.to_thread(session.fetch_token, meta["token_endpoint"], authorization_response=callback)
    assert token["token_type"] == "Bearer" and token["scope"] == SCOPE.split()
    await _api_reads_courses(platform, token["access_token"])
    refreshed = await asyncio.to_thread(session.refresh_token, meta["token_endpoint"], client_id=reg["client_id"])
    assert refreshed["refresh_token"] != token["refresh_token"]
    await _api_reads_courses(platform, refreshed["access_token"])


async def test_oauthlib_web_application_client_with_s256(platform: Platform, insecure_transport: None) -> None:
    """oauthlib's PKCE helper defaults to `plain`, which is refused: S256 must be asked for."""
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, REDIRECT)
        client = WebApplicationClient(reg["client_id"])
        verifier = client.create_code_verifier(64)
        challenge = client.create_code_challenge(verifier, "S256")
        url = client.prepare_request_uri(
            meta["authorization_endpoint"],
            redirect_uri=REDIRECT,
            scope=SCOPE.split(),
            state=secrets.token_urlsafe(8),
            code_challenge=challenge,
            code_challenge_method="S256",
        )
        callback = await _approve(platform, url)
        code = client.parse_request_uri_response(callback)["code"]
        body = client.prepare_request_body(
            code=code, redirect_uri=REDIRECT, code_verifier=verifier, include_client_id=True
        )
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        response = await http.post(meta["token_endpoint"], content=body, headers=headers)
        assert response.status_code == 200, response.text
        client.parse_request_body_response(response.text)
        assert client.token["refresh_token"]
        await _api_reads_courses(platform, client.token["access_token"])

        plain = WebApplicationClient(reg["client_id"]).create_code_challenge(verifier)  # the library's default
        refused = await http.get(
            client.prepare_request_uri(
                meta["authorization_endpoint"],
                redirect_uri=REDIRECT,
                scope=["openid"],
                code_challenge=plain,
                code_challenge_method="plain",
            )
        )
        assert refused.status_code == 303
        assert "error=invalid_request" in refused.headers["location"]


async def test_httpx_oauth_with_client_secret_basic(platform: Platform) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        assert "client_secret_basic" in meta["token_endpoint_auth_methods_supported"]
        reg = await register(http, meta, REDIRECT, token_endpoint_auth_method="client_secret_basic")
    oauth = OAuth2(
        reg["client_id"],
        reg["client_secret"],
        meta["authorization_endpoint"],
        meta["token_endpoint"],
        refresh_token_endpoint=meta["token_endpoint"],
        revoke_token_endpoint=meta["revocation_endpoint"],
        token_endpoint_auth_method="client_secret_basic",
        revocation_endpoint_auth_method="client_secret_basic",
    )
    verifier, challenge = pkce_pair()
    url = await oauth.get_authorization_url(
        REDIRECT, state="s1", scope=SCOPE.split(), code_challenge=challenge, code_challenge_method="S256"
    )
    callback = await _approve(platform, url)
    code = query_of(callback)["code"]
    token = await oauth.get_access_token(code, REDIRECT, verifier)
    await _api_reads_courses(platform, token["access_token"])
    refreshed = await oauth.refresh_token(token["refresh_token"])
    await _api_reads_courses(platform, refreshed["access_token"])
    await oauth.revoke_token(refreshed["refresh_token"], "refresh_token")
    async with httpx.AsyncClient(timeout=15.0) as http:
        gone = await http.get(
            f"{platform.base_url}/api/v1/courses", headers={"Authorization": f"Bearer {refreshed['access_token']}"}
        )
    assert gone.status_code == 401


async def test_a_request_without_scope_gets_the_documented_default(
    platform: Platform, insecure_transport: None
) -> None:
    """The MCP conformance suite's authorization-code scenario sends no scope."""
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, REDIRECT)
        client = WebApplicationClient(reg["client_id"])
        verifier = client.create_code_verifier(64)
        url = client.prepare_request_uri(
            meta["authorization_endpoint"],
            redirect_uri=REDIRECT,
            code_challenge=client.create_code_challenge(verifier, "S256"),
            code_challenge_method="S256",
        )
        assert "scope=" not in url
        callback = await _approve(platform, url)
        body = client.prepare_request_body(
            code=client.parse_request_uri_response(callback)["code"],
            redirect_uri=REDIRECT,
            code_verifier=verifier,
            include_client_id=True,
        )
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        response = await http.post(meta["token_endpoint"], content=body, headers=headers)
    assert response.status_code == 200, response.text
    granted = response.json()["scope"].split()
    assert granted[:2] == ["openid", "profile"] and "courses:read" in granted
    assert not [s for s in granted if s.endswith(":write")]
    await _api_reads_courses(platform, response.json()["access_token"])
