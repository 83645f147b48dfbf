"""The client configuration endpoint (RFC 7592): a registered client reads, updates and
deletes its registration with its registration access token; deleting ends its grants."""

from __future__ import annotations

from typing import Any

import pytest

from .flow import BASE_URL, REDIRECT_URI, Flow, Lifecycle


def _auth(reg: dict[str, Any], token: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token or reg['registration_access_token']}"}


def _path(reg: dict[str, Any]) -> str:
    return reg["registration_client_uri"].removeprefix(BASE_URL)


async def test_registration_returns_the_token_and_uri_and_read_shows_the_metadata(flow: Flow) -> None:
    reg = await flow.register(client_name="Config CLI", scope="openid courses:read")
    assert reg["registration_client_uri"] == f"{BASE_URL}/api/oauth/register/{reg['client_id']}"
    assert len(reg["registration_access_token"]) >= 32
    read = await flow.client.get(_path(reg), headers=_auth(reg))
    assert read.status_code == 200 and read.headers["cache-control"] == "no-store"
    body = read.json()
    for name in ("client_id", "client_name", "redirect_uris", "scope", "registration_client_uri"):
        assert body[name] == reg[name], name
    assert body["registration_access_token"] == reg["registration_access_token"]
    stored = await flow.pool.fetchval(
        "SELECT registration_token_hash FROM authz_clients WHERE client_id = $1", reg["client_id"]
    )
    assert stored and reg["registration_access_token"].encode() not in stored  # a hash, never the token


async def test_update_replaces_the_metadata_with_the_registration_rules(flow: Flow) -> None:
    reg = await flow.register(client_name="Old name")
    new_uri = "http://127.0.0.1:9999/cb"
    body = {"client_id": reg["client_id"], "client_name": "New name", "redirect_uris": [new_uri]}
    updated = await flow.client.put(_path(reg), headers=_auth(reg), json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["client_name"] == "New name" and updated.json()["redirect_uris"] == [new_uri]
    row = await flow.pool.fetchrow(
        "SELECT client_name, redirect_uris FROM authz_clients WHERE client_id = $1", reg["client_id"]
    )
    assert (row["client_name"], row["redirect_uris"]) == ("New name", [new_uri])


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"redirect_uris": ["https://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"client_id": "someone-else"}, "invalid_client_metadata"),
        ({"client_id": None}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "client_secret_post"}, "invalid_client_metadata"),  # public stays public
        ({"client_name": "Evil\u202eapp"}, "invalid_client_metadata"),
    ],
)
async def test_refused_update_changes_nothing(flow: Flow, change: dict[str, Any], error: str) -> None:
    reg = await flow.register(client_name="Kept")
    body = {"client_id": reg["client_id"], "client_name": "Changed", "redirect_uris": [REDIRECT_URI], **change}
    body = {k: v for k, v in body.items() if v is not None}
    refused = await flow.client.put(_path(reg), headers=_auth(reg), json=body)
    assert refused.status_code == 400 and refused.json()["error"] == error, refused.text
    row = await flow.pool.fetchrow(
        "SELECT client_name, redirect_uris FROM authz_clients WHERE client_id = $1", reg["client_id"]
    )
    assert (row["client_name"], row["redirect_uris"]) == ("Kept", [REDIRECT_URI])


async def test_a_confidential_clients_update_needs_its_current_secret_if_it_sends_one(flow: Flow) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_post")
    body = {
        "client_id": reg["client_id"],
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "client_secret_basic",
    }
    wrong = await flow.client.put(_path(reg), headers=_auth(reg), json={**body, "client_secret": "wrong"})
    assert wrong.status_code == 400
    moved = await flow.client.put(_path(reg), headers=_auth(reg), json={**body, "client_secret": reg["client_secret"]})
    assert moved.status_code == 200 and moved.json()["token_endpoint_auth_method"] == "client_secret_basic"
    assert "client_secret" not in moved.json()


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_wrong_missing_or_other_clients_token_is_401_and_changes_nothing(flow: Flow, method: str) -> None:
    reg = await flow.register()
    other = await flow.register()
    body = {"client_id": reg["client_id"], "client_name": "Taken over", "redirect_uris": [REDIRECT_URI]}
    for headers in ({}, _auth(reg, "not-the-token"), _auth(other), {"Authorization": "Basic eDp5"}):
        response = await flow.client.request(method, _path(reg), headers=headers, json=body)
        assert response.status_code == 401, (headers, response.text)
        assert response.json()["error"] == "invalid_token"
    assert await flow.count(f"authz_clients WHERE client_id = '{reg['client_id']}' AND client_name = 'Test CLI'") == 1


async def test_an_integration_or_unknown_client_has_no_configuration_endpoint(flow: Flow) -> None:
    integration = await flow.integration()
    for client_id in (integration["client_id"], "never-registered"):
        response = await flow.client.get(f"/api/oauth/register/{client_id}", headers={"Authorization": "Bearer x"})
        assert response.status_code == 401 and response.json()["error"] == "invalid_token"


async def test_delete_removes_the_client_and_ends_its_grants(flow: Flow) -> None:
    lifecycle = Lifecycle(flow)
    reg = await flow.register()
    tokens = await flow.tokens(reg)
    assert await lifecycle.userinfo_status(tokens["access_token"]) == 200
    deleted = await flow.client.delete(_path(reg), headers=_auth(reg))
    assert deleted.status_code == 204 and deleted.content == b""
    assert await flow.count(f"authz_clients WHERE client_id = '{reg['client_id']}'") == 0
    assert await lifecycle.userinfo_status(tokens["access_token"]) == 401
    refreshed = await lifecycle.refresh(reg, tokens["refresh_token"])
    assert refreshed.status_code == 401 and refreshed.json()["error"] == "invalid_client"
    assert "register the client again" in refreshed.json()["error_description"]
    again = await flow.client.get(_path(reg), headers=_auth(reg))
    assert again.status_code == 401
    page = await flow.client.get(
        "/oauth/authorize",
        params={"client_id": reg["client_id"], "redirect_uri": REDIRECT_URI, "response_type": "code"},
    )
    assert page.status_code == 400 and "registers again" in page.text


async def test_update_to_an_integrations_name_or_not_as_json_changes_nothing(flow: Flow) -> None:
    await flow.integration(name="Partner CRM")
    reg = await flow.register(client_name="Kept")
    body = {"client_id": reg["client_id"], "client_name": "Partner CRM", "redirect_uris": [REDIRECT_URI]}
    imitated = await flow.client.put(_path(reg), headers=_auth(reg), json=body)
    assert imitated.status_code == 400 and imitated.json()["error"] == "invalid_client_metadata"
    as_form = await flow.client.put(_path(reg), headers=_auth(reg), data={"client_id": reg["client_id"]})
    assert as_form.status_code == 400 and as_form.json()["error"] == "invalid_client_metadata"
    assert (
        await flow.pool.fetchval("SELECT client_name FROM authz_clients WHERE client_id = $1", reg["client_id"])
        == "Kept"
    )
