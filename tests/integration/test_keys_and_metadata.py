"""JWKS, the private keys at rest, the internal metadata documents, health."""

from __future__ import annotations

from .flow import BASE_URL, Flow


async def test_jwks_publishes_public_keys_only(flow: Flow) -> None:
    response = await flow.client.get("/api/oauth/jwks")
    assert response.status_code == 200
    keys = response.json()["keys"]
    assert {k["alg"] for k in keys} >= {"ES256", "RS256"}
    for key in keys:
        assert {"kid", "kty", "use"} <= set(key)
        assert not {"d", "p", "q", "dp", "dq", "qi"} & set(key)


async def test_private_keys_are_sealed_at_rest(flow: Flow) -> None:
    rows = await flow.pool.fetch("SELECT private_jwk, public_jwk FROM authz_signing_keys")
    assert rows
    for row in rows:
        assert b'"d"' not in row["private_jwk"]
        assert row["public_jwk"]["x" if row["public_jwk"]["kty"] == "EC" else "n"].encode() not in row["private_jwk"]


async def test_internal_metadata_needs_the_service_credential(flow: Flow) -> None:
    path = "/internal/metadata/oauth-authorization-server"
    assert (await flow.client.get(path)).status_code == 404
    assert (await flow.client.get(path, headers={"Authorization": "Bearer wrong"})).status_code == 404
    response = await flow.client.get(path, headers={"Authorization": "Bearer internal-test-token"})
    assert response.status_code == 200
    doc = response.json()
    assert doc["issuer"] == BASE_URL
    assert doc["registration_endpoint"] == f"{BASE_URL}/api/oauth/register"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["client_id_metadata_document_supported"] is True
    assert set(doc["token_endpoint_auth_methods_supported"]) == {"none", "client_secret_post", "client_secret_basic"}


async def test_openid_configuration_agrees_with_the_oauth_document(flow: Flow) -> None:
    headers = {"Authorization": "Bearer internal-test-token"}
    oauth = (await flow.client.get("/internal/metadata/oauth-authorization-server", headers=headers)).json()
    oidc = (await flow.client.get("/internal/metadata/openid-configuration", headers=headers)).json()
    for key, value in oauth.items():
        assert oidc[key] == value
    assert "RS256" in oidc["id_token_signing_alg_values_supported"]
    assert oidc["subject_types_supported"] == ["public"]


async def test_health_and_readiness(flow: Flow) -> None:
    assert (await flow.client.get("/healthz")).json() == {"status": "ok"}
    ready = await flow.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "schema": "ok"}


async def test_unknown_path_answers_json_404(flow: Flow) -> None:
    response = await flow.client.get("/api/oauth/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


async def test_request_id_is_echoed_or_made(flow: Flow) -> None:
    given = await flow.client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    made = await flow.client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert made.headers["x-request-id"] != "bad id with spaces" and len(made.headers["x-request-id"]) == 32
