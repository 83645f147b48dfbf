"""The origin's default paths of the MCP 2025-03-26 fallback (`/authorize`, `/token`,
`/register`): older agent clients use them before or instead of discovery. They behave
as the real endpoints and are listed in no metadata."""

from __future__ import annotations

from urllib.parse import urlencode

from .flow import REDIRECT_URI, Flow, pkce_pair


async def test_register_at_the_origin_registers_a_client(flow: Flow) -> None:
    response = await flow.client.post("/register", json={"client_name": "Old agent", "redirect_uris": [REDIRECT_URI]})
    assert response.status_code == 201 and response.json()["client_id"]
    refused = await flow.client.post("/register", json={"redirect_uris": ["https://evil.example/cb"]})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_redirect_uri"


async def test_authorize_at_the_origin_sends_the_browser_to_the_real_endpoint(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    query = urlencode(flow.authorize_params(reg, challenge))
    response = await flow.client.get(f"/authorize?{query}")
    assert response.status_code == 307
    assert response.headers["location"] == f"/oauth/authorize?{query}"
    followed = await flow.client.get(response.headers["location"])
    assert followed.status_code == 303 and followed.headers["location"].startswith("/oauth/interaction/")


async def test_token_at_the_origin_exchanges_and_refreshes(flow: Flow) -> None:
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, await flow.user())
    form = {
        "grant_type": "authorization_code",
        "code": callback["code"],
        "redirect_uri": REDIRECT_URI,
        "client_id": reg["client_id"],
        "code_verifier": verifier,
    }
    issued = await flow.client.post("/token", data=form)
    assert issued.status_code == 200, issued.text
    refreshed = await flow.client.post(
        "/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": issued.json()["refresh_token"],
            "client_id": reg["client_id"],
        },
    )
    assert refreshed.status_code == 200 and refreshed.json()["refresh_token"] != issued.json()["refresh_token"]
    replayed = await flow.client.post("/token", data=form)
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"


async def test_the_fallback_paths_are_in_no_metadata(flow: Flow) -> None:
    headers = {"Authorization": "Bearer internal-test-token"}
    for document in ("oauth-authorization-server", "openid-configuration"):
        text = (await flow.client.get(f"/internal/metadata/{document}", headers=headers)).text
        for path in ('/authorize"', '/token"', '/register"'):
            assert f"127.0.0.1:8000{path}" not in text, (document, path)
