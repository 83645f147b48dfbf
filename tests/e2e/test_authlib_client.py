"""A stock OAuth client library (Authlib, unmodified) against the running platform:
discovery, dynamic registration, PKCE authorization code, ID token, UserInfo, refresh."""

from __future__ import annotations

import secrets

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client

from ..support.oauth_client import SCOPE, Human, discover, query_of, register, strip_query, verify_id_token
from .conftest import CallbackServer, Platform


async def _authorize(
    oauth: AsyncOAuth2Client, platform: Platform, meta: dict, callback_server: CallbackServer
) -> tuple[dict[str, str], str, str]:
    """create_authorization_url -> the human's walk -> the loopback callback; return (query, verifier, nonce)."""
    verifier = generate_token(64)
    nonce = secrets.token_urlsafe(16)
    url, state = oauth.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    assert "code_challenge_method=S256" in url and "code_challenge=" in url
    async with Human(platform.base_url) as human:
        location = await human.authorize(url, email=platform.email, password=platform.password)
        assert strip_query(location) == callback_server.url, location
        query = query_of(location)
        assert query["state"] == state
        assert query["iss"] == platform.base_url
        assert query["code"]
        assert "error" not in query
        await human.follow_to_callback(location)
    received = await callback_server.wait(5.0)
    assert received == query
    return received, verifier, nonce


async def _check_tokens(
    oauth: AsyncOAuth2Client, platform: Platform, meta: dict, reg: dict, token: dict, nonce: str
) -> str:
    assert token["token_type"] == "Bearer"
    assert token["scope"] == SCOPE
    assert token["refresh_token"]
    assert token["access_token"]
    assert isinstance(token["expires_in"], int) and token["expires_in"] > 0
    claims = await verify_id_token(
        oauth, meta, token["id_token"], client_id=reg["client_id"], nonce=nonce, access_token=token["access_token"]
    )
    info = await oauth.get(meta["userinfo_endpoint"])
    assert info.status_code == 200, info.text
    assert info.request.headers["authorization"] == f"Bearer {token['access_token']}"
    body = info.json()
    assert body["sub"] == claims["sub"]
    assert body["email"] == platform.email
    assert body["email_verified"] is True
    assert body["name"] and body["preferred_username"]  # the profile scope was granted
    return claims["sub"]


async def test_public_client_discovery_registration_and_code_flow(
    platform: Platform, callback_server: CallbackServer
) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        assert "none" in meta["token_endpoint_auth_methods_supported"]
        reg = await register(http, meta, callback_server.url)
        assert "client_secret" not in reg

    async with AsyncOAuth2Client(
        client_id=reg["client_id"],
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
        redirect_uri=callback_server.url,
        scope=SCOPE,
        timeout=15.0,
    ) as oauth:
        query, verifier, nonce = await _authorize(oauth, platform, meta, callback_server)
        token = await oauth.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=verifier)
        await _check_tokens(oauth, platform, meta, reg, token, nonce)

        # The code is single-use (RFC 6749 §4.1.2).
        with pytest.raises(OAuthError) as replay:
            await oauth.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=verifier)
        assert replay.value.error == "invalid_grant"

    callback_server.assert_idle()


async def test_wrong_code_verifier_is_refused(platform: Platform, callback_server: CallbackServer) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = await register(http, meta, callback_server.url)
    async with AsyncOAuth2Client(
        client_id=reg["client_id"],
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
        redirect_uri=callback_server.url,
        scope=SCOPE,
        timeout=15.0,
    ) as oauth:
        query, _verifier, _nonce = await _authorize(oauth, platform, meta, callback_server)
        with pytest.raises(OAuthError) as refused:
            await oauth.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=generate_token(64))
        assert refused.value.error == "invalid_grant"


async def test_confidential_client_with_client_secret_post(platform: Platform, callback_server: CallbackServer) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        assert "client_secret_post" in meta["token_endpoint_auth_methods_supported"]
        reg = await register(
            http,
            meta,
            callback_server.url,
            token_endpoint_auth_method="client_secret_post",
            client_name="E2E Confidential",
        )
    assert reg["client_secret"]
    assert "client_secret_expires_at" in reg

    sent: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        sent.append(request)

    async with AsyncOAuth2Client(
        client_id=reg["client_id"],
        client_secret="not-the-secret",
        token_endpoint_auth_method="client_secret_post",
        code_challenge_method="S256",
        redirect_uri=callback_server.url,
        scope=SCOPE,
        timeout=15.0,
    ) as intruder:
        async with AsyncOAuth2Client(
            client_id=reg["client_id"],
            client_secret=reg["client_secret"],
            token_endpoint_auth_method="client_secret_post",
            code_challenge_method="S256",
            redirect_uri=callback_server.url,
            scope=SCOPE,
            timeout=15.0,
            event_hooks={"request": [record]},
        ) as oauth:
            query, verifier, nonce = await _authorize(oauth, platform, meta, callback_server)

            # Without the right secret, the code is not redeemed (401 invalid_client)...
            with pytest.raises(OAuthError) as refused:
                await intruder.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=verifier)
            assert refused.value.error == "invalid_client"

            # ...and the client holding the secret still can.
            token = await oauth.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=verifier)
            await _check_tokens(oauth, platform, meta, reg, token, nonce)

    token_requests = [r for r in sent if str(r.url) == meta["token_endpoint"]]
    assert len(token_requests) == 1
    form = query_of("?" + token_requests[0].content.decode())
    assert form["client_id"] == reg["client_id"]
    assert form["client_secret"] == reg["client_secret"]
    assert form["grant_type"] == "authorization_code"
    assert "authorization" not in token_requests[0].headers


async def test_refresh_token_grant_with_authlib(platform: Platform, callback_server: CallbackServer) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        assert "refresh_token" in meta["grant_types_supported"]
        reg = await register(http, meta, callback_server.url)
    async with AsyncOAuth2Client(
        client_id=reg["client_id"],
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
        redirect_uri=callback_server.url,
        scope=SCOPE,
        timeout=15.0,
    ) as oauth:
        query, verifier, nonce = await _authorize(oauth, platform, meta, callback_server)
        token = await oauth.fetch_token(meta["token_endpoint"], code=query["code"], code_verifier=verifier)
        sub = await _check_tokens(oauth, platform, meta, reg, token, nonce)
        old_access = token["access_token"]
        refreshed = await oauth.refresh_token(meta["token_endpoint"], refresh_token=token["refresh_token"])
        assert refreshed["token_type"] == "Bearer"
        assert refreshed["access_token"] != old_access
        assert set(refreshed["scope"].split()) <= set(SCOPE.split())
        info = await oauth.get(meta["userinfo_endpoint"])
        assert info.status_code == 200, info.text
        assert info.request.headers["authorization"] == f"Bearer {refreshed['access_token']}"
        assert info.json()["sub"] == sub
