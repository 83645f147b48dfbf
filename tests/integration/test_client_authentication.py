"""Client authentication at the token, revocation and introspection endpoints as client
libraries send it (RFC 6749 §2.3.1): `client_secret_basic` as a registrable method, each
client held to the method it registered, and a public client's id in a Basic header with
an empty password accepted as `none` (requests-oauthlib's documented form)."""

from __future__ import annotations

import base64
from urllib.parse import quote_plus

import pytest

from .flow import Flow, Lifecycle


def basic(client_id: str, secret: str = "") -> dict[str, str]:
    """RFC 6749 §2.3.1: id and secret form-encoded, then base64 of `id:secret`."""
    pair = f"{quote_plus(client_id)}:{quote_plus(secret)}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


async def _code(flow: Flow, reg: dict) -> tuple[str, str]:
    callback, verifier, _ = await flow.authorize(reg, await flow.user())
    return callback["code"], verifier


def _exchange_form(reg: dict, code: str, verifier: str, **extra: str) -> dict[str, str]:
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": reg["redirect_uris"][0],
        "code_verifier": verifier,
        **extra,
    }


async def test_client_secret_basic_is_registered_and_advertised(flow: Flow) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    assert reg["token_endpoint_auth_method"] == "client_secret_basic"
    assert reg["client_secret"] and reg["client_secret_expires_at"] == 0
    headers = {"Authorization": "Bearer internal-test-token"}
    for document in ("oauth-authorization-server", "openid-configuration"):
        metadata = (await flow.client.get(f"/internal/metadata/{document}", headers=headers)).json()
        assert "client_secret_basic" in metadata["token_endpoint_auth_methods_supported"], document
    metadata = (await flow.client.get("/internal/metadata/oauth-authorization-server", headers=headers)).json()
    assert "client_secret_basic" in metadata["revocation_endpoint_auth_methods_supported"]


async def test_basic_client_gets_tokens_refreshes_and_revokes_with_the_header(flow: Flow) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    code, verifier = await _code(flow, reg)
    headers = basic(reg["client_id"], reg["client_secret"])
    issued = await flow.client.post("/api/oauth/token", headers=headers, data=_exchange_form(reg, code, verifier))
    assert issued.status_code == 200, issued.text
    refreshed = await flow.client.post(
        "/api/oauth/token",
        headers=headers,
        data={"grant_type": "refresh_token", "refresh_token": issued.json()["refresh_token"]},
    )
    assert refreshed.status_code == 200, refreshed.text
    new_refresh = refreshed.json()["refresh_token"]
    revoked = await flow.client.post("/api/oauth/revoke", headers=headers, data={"token": new_refresh})
    assert revoked.status_code == 200
    after = await flow.client.post(
        "/api/oauth/token", headers=headers, data={"grant_type": "refresh_token", "refresh_token": new_refresh}
    )
    assert after.json()["error"] == "invalid_grant"


async def test_basic_credentials_are_form_decoded_and_the_form_may_repeat_the_id(flow: Flow) -> None:
    """§2.3.1: the id and secret are form-encoded inside the header (a library that
    encodes them, like oauthlib, must work); a form client_id equal to it is fine."""
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    code, verifier = await _code(flow, reg)
    response = await flow.client.post(
        "/api/oauth/token",
        headers=basic(reg["client_id"], reg["client_secret"]),
        data=_exchange_form(reg, code, verifier, client_id=reg["client_id"]),
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("registered", "sent", "says"),
    [
        ("client_secret_post", "basic", "send client_id and client_secret in the form body"),
        ("client_secret_basic", "post", "in an HTTP Basic Authorization header"),
        ("client_secret_basic", "no secret", "in an HTTP Basic Authorization header"),
        ("none", "post", "no client_secret (this is a public client)"),
    ],
)
async def test_a_client_keeps_the_method_it_registered(flow: Flow, registered: str, sent: str, says: str) -> None:
    reg = await flow.register(token_endpoint_auth_method=registered)
    code, verifier = await _code(flow, reg)
    secret = reg.get("client_secret", "not-a-secret")
    form = _exchange_form(reg, code, verifier)
    headers: dict[str, str] = {}
    if sent == "basic":
        headers = basic(reg["client_id"], secret)
    elif sent == "post":
        form |= {"client_id": reg["client_id"], "client_secret": secret}
    else:
        form |= {"client_id": reg["client_id"]}
    response = await flow.client.post("/api/oauth/token", headers=headers, data=form)
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "invalid_client"
    assert says in response.json()["error_description"]
    assert ("www-authenticate" in response.headers) == (sent == "basic")  # §5.2: the scheme the client tried
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_wrong_basic_secret_is_401_with_the_basic_challenge(flow: Flow) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    code, verifier = await _code(flow, reg)
    response = await flow.client.post(
        "/api/oauth/token", headers=basic(reg["client_id"], "wrong"), data=_exchange_form(reg, code, verifier)
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert response.headers["www-authenticate"].startswith("Basic realm=")
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_public_client_id_in_basic_with_an_empty_password_is_accepted_as_none(flow: Flow) -> None:
    """requests-oauthlib's documented call sends a public client's id this way."""
    reg = await flow.register()
    code, verifier = await _code(flow, reg)
    response = await flow.client.post(
        "/api/oauth/token", headers=basic(reg["client_id"]), data=_exchange_form(reg, code, verifier)
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "header",
    ["Basic", "Basic !!!notbase64", "Basic " + base64.b64encode(b"no-colon").decode(), "Digest abc", "Bearer xyz"],
)
async def test_malformed_authorization_headers_are_invalid_client(flow: Flow, header: str) -> None:
    reg = await flow.register()
    code, verifier = await _code(flow, reg)
    form = _exchange_form(reg, code, verifier, client_id=reg["client_id"])
    response = await flow.client.post("/api/oauth/token", headers={"Authorization": header}, data=form)
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert response.headers["www-authenticate"].startswith("Basic ")
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_a_secret_in_both_the_header_and_the_form_is_refused(flow: Flow) -> None:
    """§2.3: a client must not use more than one authentication method in a request."""
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    code, verifier = await _code(flow, reg)
    form = _exchange_form(reg, code, verifier, client_secret=reg["client_secret"])
    response = await flow.client.post(
        "/api/oauth/token", headers=basic(reg["client_id"], reg["client_secret"]), data=form
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_unknown_client_id_is_401_invalid_client_in_json_saying_to_register_again(flow: Flow) -> None:
    response = await flow.token(grant_type="refresh_token", refresh_token="x", client_id="never-registered")
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"] == "invalid_client" and "register the client again" in body["error_description"]


async def test_basic_integration_may_not_introspect_unless_registered_so(flow: Flow) -> None:
    """An administrator's integration authenticates with client_secret_post: the same
    secret in a Basic header is refused and the token's state is not disclosed."""
    lifecycle = Lifecycle(flow)
    rs = await flow.integration()
    tokens = await flow.tokens()
    refused = await flow.client.post(
        "/api/oauth/introspect",
        headers=basic(rs["client_id"], rs["client_secret"]),
        data={"token": tokens["access_token"]},
    )
    assert refused.status_code == 401 and "active" not in refused.json()
    assert (await lifecycle.introspect(rs, tokens["access_token"]))["active"] is True


async def test_an_integration_made_for_basic_introspects_with_the_header_only(flow: Flow) -> None:
    """Many resource-server libraries send their secret as HTTP Basic: an administrator
    may make the resource server's client so, and it is then held to that method."""
    rs = await flow.integration(auth_method="client_secret_basic")
    assert rs["token_endpoint_auth_method"] == "client_secret_basic"
    tokens = await flow.tokens()
    answered = await flow.client.post(
        "/api/oauth/introspect",
        headers=basic(rs["client_id"], rs["client_secret"]),
        data={"token": tokens["access_token"]},
    )
    assert answered.status_code == 200 and answered.json()["active"] is True
    in_the_form = await flow.client.post(
        "/api/oauth/introspect",
        data={"token": tokens["access_token"], "client_id": rs["client_id"], "client_secret": rs["client_secret"]},
    )
    assert in_the_form.status_code == 401 and in_the_form.json()["error"] == "invalid_client"
    assert "active" not in in_the_form.json()
    headers = {"Authorization": "Bearer internal-test-token"}
    metadata = (await flow.client.get("/internal/metadata/oauth-authorization-server", headers=headers)).json()
    assert metadata["introspection_endpoint_auth_methods_supported"] == ["client_secret_post", "client_secret_basic"]
