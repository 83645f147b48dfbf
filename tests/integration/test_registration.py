"""Dynamic client registration, RFC 7591, with the loopback rules of INTERFACE.md."""

from __future__ import annotations

import pytest

from courseschool.common.secrets import digest

from .flow import Flow


async def test_public_client_registers_with_defaults(flow: Flow) -> None:
    response = await flow.client.post(
        "/api/oauth/register", json={"client_name": "My CLI", "redirect_uris": ["http://localhost:3000/callback"]}
    )
    assert response.status_code == 201
    body = response.json()
    assert body["client_name"] == "My CLI"
    assert body["redirect_uris"] == ["http://localhost:3000/callback"]
    assert body["token_endpoint_auth_method"] == "none"
    assert body["application_type"] == "native"
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["response_types"] == ["code"]
    assert isinstance(body["client_id_issued_at"], int)
    assert "client_secret" not in body
    assert response.headers["cache-control"] == "no-store"
    row = await flow.pool.fetchrow(
        "SELECT client_name, secret_hash FROM authz_clients WHERE client_id = $1", body["client_id"]
    )
    assert row["client_name"] == "My CLI" and row["secret_hash"] is None


async def test_confidential_client_gets_a_secret_stored_only_as_a_digest(flow: Flow) -> None:
    body = await flow.register(token_endpoint_auth_method="client_secret_post")
    assert len(body["client_secret"]) >= 43
    assert body["client_secret_expires_at"] == 0
    stored = await flow.pool.fetchval("SELECT secret_hash FROM authz_clients WHERE client_id = $1", body["client_id"])
    assert stored == digest(body["client_secret"])
    assert body["client_secret"].encode() not in stored


async def test_client_cannot_choose_its_own_id_or_secret(flow: Flow) -> None:
    body = await flow.register(client_id="chosen-id", client_secret="chosen-secret")
    assert body["client_id"] != "chosen-id"
    assert "client_secret" not in body
    assert await flow.count("authz_clients WHERE client_id = 'chosen-id'") == 0


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["https://app.example.com/callback"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://example.com/callback"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["com.example.app:/callback"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://127.0.0.1:8080/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://user@127.0.0.1/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://127.0.0.1/cb", "https://app.example.com/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "private_key_jwt"},
            "invalid_client_metadata",
        ),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "grant_types": ["implicit"]}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "response_types": ["token"]}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "application_type": "web"}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "scope": "openid teleport"}, "invalid_client_metadata"),
        ({"redirect_uris": "http://127.0.0.1/cb"}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": 42}, "invalid_client_metadata"),
    ],
)
async def test_refused_registration_stores_nothing(flow: Flow, metadata: dict, error: str) -> None:
    response = await flow.client.post("/api/oauth/register", json=metadata)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == error
    assert body["error_description"]
    assert await flow.count("authz_clients") == 0


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"not json", "application/json"),
        (b"[1, 2]", "application/json"),
        (b"redirect_uris=x", "application/x-www-form-urlencoded"),
    ],
)
async def test_body_that_is_not_a_json_object_is_refused(flow: Flow, content: bytes, content_type: str) -> None:
    response = await flow.client.post("/api/oauth/register", content=content, headers={"content-type": content_type})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert await flow.count("authz_clients") == 0
