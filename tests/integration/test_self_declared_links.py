"""The pages a client says describe it (RFC 7591 §2: `client_uri`, `policy_uri`,
`tos_uri`): accepted as https links, stored, returned, and shown on the consent page as
links marked as the app's own claim, with the host each one really goes to. Anything
else is refused at registration, at an RFC 7592 update and in a metadata document, and
nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest
import structlog

from .cimd import LOOPBACK, publish
from .flow import BASE_URL, Flow, pkce_pair

LINKS = {
    "client_uri": "https://agent.example/",
    "policy_uri": "https://agent.example/privacy",
    "tos_uri": "https://legal.agent.example/terms",
}


async def _consent_page(flow: Flow, client_id: str, redirect_uri: str) -> str:
    _, challenge = pkce_pair()
    params = flow.authorize_params({"client_id": client_id, "redirect_uris": [redirect_uri]}, challenge)
    start = await flow.start(params)
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    assert (await flow.login(interaction, await flow.user())).status_code == 303
    page, _ = await flow.page(interaction)
    assert page.status_code == 200
    return page.text


async def test_registered_links_are_returned_and_shown_as_the_apps_own(flow: Flow) -> None:
    reg = await flow.register(client_name="Linked CLI", **LINKS)
    for field, url in LINKS.items():
        assert reg[field] == url
    text = await _consent_page(flow, reg["client_id"], reg["redirect_uris"][0])
    assert "Its own links (not checked by us)" in text
    assert 'href="https://agent.example/privacy" rel="noopener noreferrer nofollow"' in text
    assert 'terms of service</a>\n<span class="unit">(legal.agent.example)</span>' in text


async def test_an_update_changes_the_links(flow: Flow) -> None:
    reg = await flow.register(client_name="Linked CLI", **LINKS)
    body = {"client_id": reg["client_id"], "redirect_uris": reg["redirect_uris"], "client_uri": "https://new.example"}
    updated = await flow.client.put(
        reg["registration_client_uri"].removeprefix(BASE_URL),
        headers={"Authorization": f"Bearer {reg['registration_access_token']}"},
        json=body,
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["client_uri"] == "https://new.example" and "policy_uri" not in updated.json()


@pytest.mark.parametrize(
    "bad",
    [
        "http://agent.example/",
        "javascript:alert(1)",
        "https://school.example@evil.example/",
        "https:///no-host",
        "https://agent.example/a b",
        "https://agent.example/\x00",
        "https://[::1/",
        "",
        "https://agent.example/" + "a" * 2000,
    ],
)
async def test_a_link_that_is_not_a_plain_https_url_is_refused(flow: Flow, bad: str) -> None:
    response = await flow.client.post(
        "/api/oauth/register", json={"redirect_uris": [LOOPBACK], "client_name": "Bad link", "policy_uri": bad}
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert "policy_uri" in response.json()["error_description"]
    assert await flow.count("authz_clients") == 0


async def test_a_metadata_documents_links_are_shown_and_a_bad_one_refused(cimd_flow: Flow, site: Any) -> None:
    server, _ = site
    good = publish(server, "/oauth/linked.json", **LINKS)
    text = await _consent_page(cimd_flow, good, LOOPBACK)
    assert "Its own links" in text and "(agent.example)" in text
    bad = publish(server, "/oauth/bad-link.json", tos_uri="http://agent.example/terms")
    _, challenge = pkce_pair()
    with structlog.testing.capture_logs() as events:
        start = await cimd_flow.start(
            cimd_flow.authorize_params({"client_id": bad, "redirect_uris": [LOOPBACK]}, challenge)
        )
    assert start.status_code == 400 and "location" not in start.headers
    (detail,) = [e["detail"] for e in events if e["event"] == "request_refused"]
    assert "tos_uri" in detail
