"""The token endpoint with the authorization_code grant."""

from __future__ import annotations

import asyncio

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from courseschool.authz.protocol.tokens import at_hash
from courseschool.common.secrets import digest

from .flow import BASE_URL, Flow


async def _code(flow: Flow, reg: dict | None = None, **extra: str) -> tuple[dict, str, str]:
    reg = reg or await flow.register()
    user = await flow.user()
    callback, verifier, _ = await flow.authorize(reg, user, **extra)
    return reg, callback["code"], verifier


async def _keys(flow: Flow) -> KeySet:
    return KeySet.import_key_set((await flow.client.get("/api/oauth/jwks")).json())


async def test_access_token_is_an_rfc9068_jwt_for_the_api(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    response = await flow.exchange(reg, code, verifier)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope", "refresh_token", "id_token"}
    assert body["expires_in"] == 600
    token = jwt.decode(body["access_token"], await _keys(flow), algorithms=["ES256"])
    assert token.header["typ"] == "at+jwt" and token.header["alg"] == "ES256"
    claims = token.claims
    assert claims["iss"] == BASE_URL and claims["aud"] == BASE_URL
    assert claims["client_id"] == reg["client_id"]
    assert claims["scope"] == body["scope"]
    assert claims["exp"] - claims["iat"] == 600
    assert {"sub", "jti", "school_id", "grant_id", "auth_time"} <= set(claims)


async def test_id_token_carries_nonce_auth_time_and_at_hash(flow: Flow) -> None:
    reg, code, verifier = await _code(flow, nonce="n-0S6_WzA2Mj")
    body = (await flow.exchange(reg, code, verifier)).json()
    token = jwt.decode(body["id_token"], await _keys(flow), algorithms=["RS256"])
    assert token.header["alg"] == "RS256"
    claims = token.claims
    assert claims["aud"] == reg["client_id"] and claims["iss"] == BASE_URL
    assert claims["nonce"] == "n-0S6_WzA2Mj"
    assert claims["at_hash"] == at_hash(body["access_token"])
    assert isinstance(claims["auth_time"], int)


async def test_client_may_register_es256_id_tokens(flow: Flow) -> None:
    reg = await flow.register(id_token_signed_response_alg="ES256")
    reg, code, verifier = await _code(flow, reg)
    body = (await flow.exchange(reg, code, verifier)).json()
    assert jwt.decode(body["id_token"], await _keys(flow), algorithms=["ES256"]).header["alg"] == "ES256"


async def test_no_id_token_without_openid(flow: Flow) -> None:
    reg, code, verifier = await _code(flow, scope="courses:read")
    body = (await flow.exchange(reg, code, verifier)).json()
    assert "id_token" not in body and body["scope"] == "courses:read"


async def test_reused_code_is_refused_and_revokes_what_it_issued(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    first = await flow.exchange(reg, code, verifier)
    assert first.status_code == 200
    access = first.json()["access_token"]
    ok = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {access}"})
    assert ok.status_code == 200
    second = await flow.exchange(reg, code, verifier)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    after = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {access}"})
    assert after.status_code == 401 and after.json()["error"] == "invalid_token"
    assert await flow.count("authz_grants WHERE revoked_at IS NOT NULL AND revoke_reason = 'code_reused'") == 1


async def test_parallel_redemptions_of_one_code_issue_tokens_exactly_once(flow: Flow) -> None:
    for _ in range(5):
        reg, code, verifier = await _code(flow)
        results = await asyncio.gather(*(flow.exchange(reg, code, verifier) for _ in range(8)))
        statuses = sorted(r.status_code for r in results)
        # The code is consumed by one UPDATE: the first to run it wins, and no loser can
        # revoke the grant before that, so exactly one redemption is answered with tokens.
        assert statuses.count(200) == 1, [r.text for r in results]
        assert all(s in (200, 400) for s in statuses)
        assert all(r.json()["error"] == "invalid_grant" for r in results if r.status_code == 400)
        issued = await flow.pool.fetchval(
            "SELECT count(*) FROM authz_refresh_tokens rt JOIN authz_codes c USING (grant_id) WHERE c.code_hash = $1",
            digest(code),
        )
        assert issued == 1
        # every losing redemption is a reuse: the grant it belongs to ends
        assert (
            await flow.count(
                f"authz_grants g JOIN authz_codes c ON c.grant_id = g.id WHERE c.code_hash = '\\x{digest(code).hex()}' AND g.revoked_at IS NOT NULL"
            )
            == 1
        )


async def test_wrong_verifier_is_refused_and_leaves_the_code_usable(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    wrong = await flow.exchange(reg, code, "x" * 64)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0
    assert (await flow.exchange(reg, code, verifier)).status_code == 200


@pytest.mark.parametrize(
    ("change", "status", "error"),
    [
        ({"redirect_uri": "http://127.0.0.1:53682/elsewhere"}, 400, "invalid_grant"),
        ({"code_verifier": ""}, 400, "invalid_request"),
        ({"code_verifier": "short"}, 400, "invalid_request"),
        ({"code": "not-a-real-code"}, 400, "invalid_grant"),
        ({"code": ""}, 400, "invalid_request"),
        ({"redirect_uri": ""}, 400, "invalid_request"),
        ({"resource": "https://other.example"}, 400, "invalid_target"),
        ({"client_id": "unknown-client"}, 401, "invalid_client"),
        ({"client_id": ""}, 401, "invalid_client"),
        ({"grant_type": ""}, 400, "invalid_request"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type"),
        ({"client_secret": "a secret from a public client"}, 401, "invalid_client"),
    ],
)
async def test_refused_exchange_issues_nothing(flow: Flow, change: dict, status: int, error: str) -> None:
    reg, code, verifier = await _code(flow)
    response = await flow.exchange(reg, code, verifier, **change)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error and body["error_description"]
    assert response.headers["cache-control"] == "no-store"
    assert await flow.count("authz_refresh_tokens") == 0
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_code_of_another_client_is_refused(flow: Flow) -> None:
    _reg, code, verifier = await _code(flow)
    other = await flow.register()
    response = await flow.exchange(other, code, verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    assert await flow.count("authz_refresh_tokens") == 0


async def test_expired_code_is_refused(flow: Flow, clock) -> None:
    reg, code, verifier = await _code(flow)
    clock.advance(61)
    response = await flow.exchange(reg, code, verifier)
    assert response.status_code == 400 and "expired" in response.json()["error_description"]


async def test_resource_named_at_the_token_endpoint_must_match_the_grant(flow: Flow) -> None:
    reg, code, verifier = await _code(flow, resource=BASE_URL + "/")
    response = await flow.exchange(reg, code, verifier, resource="HTTP://127.0.0.1:8000")
    assert response.status_code == 200
    assert jwt.decode(response.json()["access_token"], await _keys(flow)).claims["aud"] == BASE_URL


async def test_confidential_client_must_authenticate(flow: Flow) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_post")
    reg, code, verifier = await _code(flow, reg)
    missing = await flow.exchange(reg, code, verifier, client_secret="")
    wrong = await flow.exchange(reg, code, verifier, client_secret="not the secret")
    assert (missing.status_code, missing.json()["error"]) == (401, "invalid_client")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client")
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0
    assert (await flow.exchange(reg, code, verifier)).status_code == 200


async def test_basic_credentials_naming_another_client_than_the_form_are_refused(flow: Flow) -> None:
    """RFC 6749 §2.3: one client per request; nothing is consumed."""
    reg, code, verifier = await _code(flow)
    response = await flow.client.post(
        "/api/oauth/token",
        headers={"Authorization": "Basic Zm9vOmJhcg=="},  # foo:bar
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": reg["client_id"],
            "redirect_uri": reg["redirect_uris"][0],
            "code_verifier": verifier,
        },
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert await flow.count("authz_codes WHERE consumed_at IS NOT NULL") == 0


async def test_token_request_must_be_form_encoded(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    response = await flow.client.post(
        "/api/oauth/token",
        json={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": reg["client_id"],
            "redirect_uri": reg["redirect_uris"][0],
            "code_verifier": verifier,
        },
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


async def test_repeated_form_parameter_is_refused(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    body = (
        f"grant_type=authorization_code&code={code}&code={code}&client_id={reg['client_id']}"
        f"&redirect_uri={reg['redirect_uris'][0]}&code_verifier={verifier}"
    )
    response = await flow.client.post(
        "/api/oauth/token", content=body, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


async def test_disabled_client_cannot_redeem(flow: Flow) -> None:
    reg, code, verifier = await _code(flow)
    await flow.pool.execute("UPDATE authz_clients SET disabled_at = now() WHERE client_id = $1", reg["client_id"])
    # A write from outside the server reaches its client cache with the NOTIFY, about a
    # millisecond after the commit (docs/design.md): wait for it on a request that spends
    # nothing (revoking an unknown token), then spend the code.
    for _ in range(300):
        probe = await flow.client.post(
            "/api/oauth/revoke", data={"token": "not-a-token", "client_id": reg["client_id"]}
        )
        if probe.status_code == 401:
            break
        await asyncio.sleep(0.01)
    response = await flow.exchange(reg, code, verifier)
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"


async def test_client_registered_without_refresh_gets_no_refresh_token(flow: Flow) -> None:
    reg = await flow.register(grant_types=["authorization_code"])
    reg, code, verifier = await _code(flow, reg)
    body = (await flow.exchange(reg, code, verifier)).json()
    assert "refresh_token" not in body and "access_token" in body
