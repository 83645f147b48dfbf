"""The whole journey a command-line client makes, over real HTTP against the running
platform: start from the protected resource's metadata, register, authorize, call
the API with the bearer token, refresh, revoke, and be refused afterwards."""

from __future__ import annotations

import asyncio

import httpx
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client

from ..support.oauth_client import Human, query_of
from .conftest import CallbackServer, Platform

SCOPE = "openid courses:read students:read analytics:read"


async def test_client_journey_from_resource_metadata_to_revocation(
    platform: Platform, callback_server: CallbackServer
) -> None:
    base = platform.base_url
    async with httpx.AsyncClient(timeout=15.0) as http:
        # 1. An unauthenticated call to a private area says where to go (no challenge: anonymous).
        refused = await http.get(f"{base}/api/v1/students")
        assert refused.status_code == 403
        prm = (await http.get(f"{base}/.well-known/oauth-protected-resource")).json()
        assert prm["resource"] == base and prm["authorization_servers"] == [base]
        meta = (await http.get(f"{prm['authorization_servers'][0]}/.well-known/oauth-authorization-server")).json()
        reg = (
            await http.post(
                meta["registration_endpoint"],
                json={
                    "client_name": "Journey CLI",
                    "redirect_uris": [callback_server.url],
                },
            )
        ).json()

        # 2. The public catalogue needs no token.
        catalogue = (await http.get(f"{base}/api/v1/courses?school=demo")).json()
        assert catalogue["items"] and all(c["published"] for c in catalogue["items"])

    async with AsyncOAuth2Client(
        client_id=reg["client_id"],
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
        redirect_uri=callback_server.url,
        scope=SCOPE,
        timeout=15.0,
    ) as oauth:
        verifier = generate_token(64)
        url, _ = oauth.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, resource=base)
        async with Human(base) as human:
            location = await human.authorize(url, email=platform.email, password=platform.password)
        code = query_of(location)["code"]
        token = await oauth.fetch_token(meta["token_endpoint"], code=code, code_verifier=verifier)
        assert token["scope"] == SCOPE

        # 3. The token reads the demo school's private data, with the scopes it was granted.
        students = await oauth.get(f"{base}/api/v1/students?limit=5")
        assert students.status_code == 200 and len(students.json()["items"]) == 5
        assert students.json()["next_cursor"]
        figures = await oauth.get(f"{base}/api/v1/analytics")
        assert figures.status_code == 200 and figures.json()["totals"]["students"] > 0
        drafts = await oauth.get(f"{base}/api/v1/courses?published=false")
        assert drafts.status_code == 200 and drafts.json()["items"]
        no_scope = await oauth.get(f"{base}/api/v1/orders")
        assert no_scope.status_code == 403 and no_scope.json()["scope"] == "orders:read"
        assert "resource_metadata=" in no_scope.headers["www-authenticate"]

        # 4. Refresh, then revoke: the grant ends and the API refuses its tokens.
        fresh = await oauth.refresh_token(meta["token_endpoint"], refresh_token=token["refresh_token"])
        assert (await oauth.get(f"{base}/api/v1/courses")).status_code == 200
        async with httpx.AsyncClient(timeout=15.0) as http:
            revoked = await http.post(
                meta["revocation_endpoint"],
                data={
                    "token": fresh["refresh_token"],
                    "client_id": reg["client_id"],
                },
            )
            assert revoked.status_code == 200
            await asyncio.sleep(0.2)
            after = await http.get(
                f"{base}/api/v1/courses", headers={"Authorization": f"Bearer {fresh['access_token']}"}
            )
            assert after.status_code == 401 and after.json()["error"] == "invalid_token"
