"""DPoP (RFC 9449) at the authorization server, through its endpoints over a real
Postgres and Redis: a proof at the token endpoint binds the access token (§5, §6.1), a
public client's refresh tokens are bound to the key (§5), `dpop_jkt` binds the code
(§10), `dpop_bound_access_tokens` clients must send proofs (§5.2), server nonces (§8),
UserInfo as a protected resource (§7), introspection's `cnf` (§6.2). Every refusal
consumes nothing: the right request afterwards still works."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.clock import FrozenClock
from courseschool.common.dpop import DpopChecker, DpopPolicy, ProofTarget
from courseschool.common.dpop_store import RedisDpopStore

from ..support.dpop_proofs import DpopKey
from .conftest import serve
from .flow import BASE_URL, Flow, Lifecycle, query_of

TOKEN_URL = f"{BASE_URL}/api/oauth/token"
USERINFO_URL = f"{BASE_URL}/api/oauth/userinfo"
ALGS = '"ES256 Ed25519 EdDSA RS256 PS256"'


def claims_of(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Dpop:
    """Token requests with (or without) a DPoP proof."""

    def __init__(self, flow: Flow, clock: FrozenClock) -> None:
        self.flow = flow
        self.clock = clock

    def proof(self, key: DpopKey, method: str = "POST", url: str = TOKEN_URL, **extra: Any) -> str:
        return key.proof(method, url, iat=self.clock.now(), **extra)

    async def post(self, form: dict[str, str], key: DpopKey | None, proof: str | None = None) -> httpx.Response:
        headers = {"DPoP": proof or self.proof(key)} if key is not None or proof is not None else {}
        return await self.flow.client.post("/api/oauth/token", data=form, headers=headers)

    async def code(self, reg: dict[str, Any], user: dict[str, str], **extra: str) -> dict[str, str]:
        callback, verifier, _ = await self.flow.authorize(reg, user, **extra)
        form = {
            "grant_type": "authorization_code",
            "code": callback.get("code", ""),
            "redirect_uri": reg["redirect_uris"][0],
            "client_id": reg["client_id"],
            "code_verifier": verifier,
        }
        if "client_secret" in reg:
            form["client_secret"] = reg["client_secret"]
        return form

    async def tokens(self, reg: dict[str, Any], user: dict[str, str], key: DpopKey | None) -> dict[str, Any]:
        response = await self.post(await self.code(reg, user), key)
        assert response.status_code == 200, response.text
        return response.json()

    def refresh_form(self, reg: dict[str, Any], refresh_token: str) -> dict[str, str]:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": reg["client_id"]}
        if "client_secret" in reg:
            form["client_secret"] = reg["client_secret"]
        return form


@pytest.fixture
def dpop(flow: Flow, clock: FrozenClock) -> Dpop:
    return Dpop(flow, clock)


def _refused(response: httpx.Response, error: str, status: int = 400) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"] == error, response.text


async def test_a_proof_at_the_token_endpoint_binds_the_access_token(flow: Flow, dpop: Dpop) -> None:
    key = DpopKey()
    tokens = await dpop.tokens(await flow.register(), await flow.user(), key)
    assert tokens["token_type"] == "DPoP"
    assert claims_of(tokens["access_token"])["cnf"] == {"jkt": key.jkt}


async def test_without_a_proof_tokens_stay_bearer_tokens(flow: Flow, dpop: Dpop) -> None:
    reg = await flow.register()
    tokens = await dpop.tokens(reg, await flow.user(), None)
    assert tokens["token_type"] == "Bearer" and "cnf" not in claims_of(tokens["access_token"])
    renewed = await dpop.post(dpop.refresh_form(reg, tokens["refresh_token"]), None)
    assert renewed.status_code == 200 and renewed.json()["token_type"] == "Bearer"


async def test_a_public_clients_refresh_token_needs_a_proof_by_the_same_key(flow: Flow, dpop: Dpop) -> None:
    key, other = DpopKey(), DpopKey()
    reg = await flow.register()
    tokens = await dpop.tokens(reg, await flow.user(), key)
    form = dpop.refresh_form(reg, tokens["refresh_token"])
    _refused(await dpop.post(form, None), "invalid_grant")
    _refused(await dpop.post(form, other), "invalid_grant")
    renewed = await dpop.post(form, key)  # nothing was consumed or revoked by the refusals
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["token_type"] == "DPoP"
    assert claims_of(renewed.json()["access_token"])["cnf"] == {"jkt": key.jkt}
    again = dpop.refresh_form(reg, renewed.json()["refresh_token"])
    _refused(await dpop.post(again, other), "invalid_grant")  # the rotated token is bound too
    assert (await dpop.post(again, key)).status_code == 200


async def test_a_confidential_clients_refresh_token_is_not_bound(flow: Flow, dpop: Dpop) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_post")
    tokens = await dpop.tokens(reg, await flow.user(), DpopKey())
    assert tokens["token_type"] == "DPoP"
    renewed = await dpop.post(dpop.refresh_form(reg, tokens["refresh_token"]), None)
    assert renewed.status_code == 200 and renewed.json()["token_type"] == "Bearer"


async def test_the_first_proof_at_a_refresh_binds_a_public_clients_grant(flow: Flow, dpop: Dpop) -> None:
    key, other = DpopKey(), DpopKey()
    reg = await flow.register()
    tokens = await dpop.tokens(reg, await flow.user(), None)
    renewed = await dpop.post(dpop.refresh_form(reg, tokens["refresh_token"]), key)
    assert renewed.status_code == 200 and renewed.json()["token_type"] == "DPoP"
    form = dpop.refresh_form(reg, renewed.json()["refresh_token"])
    _refused(await dpop.post(form, None), "invalid_grant")
    _refused(await dpop.post(form, other), "invalid_grant")
    assert (await dpop.post(form, key)).status_code == 200


async def test_dpop_jkt_binds_the_code_to_the_key(flow: Flow, dpop: Dpop) -> None:
    key, other = DpopKey(), DpopKey()
    form = await dpop.code(await flow.register(), await flow.user(), dpop_jkt=key.jkt)
    _refused(await dpop.post(form, None), "invalid_grant")
    _refused(await dpop.post(form, other), "invalid_grant")
    assert await flow.count("authz_refresh_tokens") == 0  # the code was not consumed
    tokens = await dpop.post(form, key)
    assert tokens.status_code == 200 and claims_of(tokens.json()["access_token"])["cnf"] == {"jkt": key.jkt}


async def test_a_malformed_dpop_jkt_is_refused_at_authorize(flow: Flow) -> None:
    reg = await flow.register()
    start = await flow.start(flow.authorize_params(reg, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", dpop_jkt="x"))
    assert start.status_code == 303
    answer = query_of(start.headers["location"])
    assert answer["error"] == "invalid_request" and "dpop_jkt" in answer["error_description"]


async def test_a_client_registered_dpop_bound_must_send_proofs(flow: Flow, dpop: Dpop) -> None:
    reg = await flow.register(dpop_bound_access_tokens=True)
    assert reg["dpop_bound_access_tokens"] is True
    form = await dpop.code(reg, await flow.user())
    _refused(await dpop.post(form, None), "invalid_request")
    tokens = await dpop.post(form, DpopKey())
    assert tokens.status_code == 200 and tokens.json()["token_type"] == "DPoP"
    assert "dpop_bound_access_tokens" not in await flow.register()  # the default: false, not listed


async def test_a_refused_proof_is_invalid_dpop_proof_and_consumes_nothing(flow: Flow, dpop: Dpop, clock) -> None:
    key = DpopKey()
    reg = await flow.register()
    tokens = await dpop.tokens(reg, await flow.user(), key)
    form = dpop.refresh_form(reg, tokens["refresh_token"])
    replayed = dpop.proof(key)
    assert (await dpop.post(dpop.refresh_form(reg, "unknown-token"), None, replayed)).status_code == 400
    for name, proof in (
        ("replayed", replayed),
        ("wrong htu", dpop.proof(key, url=f"{BASE_URL}/api/oauth/revoke")),
        ("wrong htm", dpop.proof(key, method="GET")),
        ("stale iat", key.proof("POST", TOKEN_URL, iat=clock.now() - 61)),
        ("another key's signature", key.proof("POST", TOKEN_URL, iat=clock.now(), signer=DpopKey().key)),
    ):
        response = await dpop.post(form, None, proof)
        _refused(response, "invalid_dpop_proof")
        assert response.headers["cache-control"] == "no-store", name
    assert (await dpop.post(form, key)).status_code == 200


async def test_the_metadata_lists_the_dpop_algorithms(flow: Flow) -> None:
    headers = {"Authorization": "Bearer internal-test-token"}
    for document in ("oauth-authorization-server", "openid-configuration"):
        doc = (await flow.client.get(f"/internal/metadata/{document}", headers=headers)).json()
        assert doc["dpop_signing_alg_values_supported"] == ["ES256", "Ed25519", "EdDSA", "RS256", "PS256"]


async def test_userinfo_takes_a_bound_token_only_with_its_keys_proof(flow: Flow, dpop: Dpop) -> None:
    key = DpopKey()
    token = (await dpop.tokens(await flow.register(), await flow.user(), key))["access_token"]
    proof = dpop.proof(key, "GET", USERINFO_URL, access_token=token)
    ok = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"DPoP {token}", "DPoP": proof})
    assert ok.status_code == 200 and ok.json()["sub"]
    as_bearer = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {token}"})
    assert as_bearer.status_code == 401 and as_bearer.json()["error"] == "invalid_token"
    assert as_bearer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert f"DPoP algs={ALGS}" in as_bearer.headers["www-authenticate"]
    no_ath = await flow.client.get(
        "/api/oauth/userinfo", headers={"Authorization": f"DPoP {token}", "DPoP": dpop.proof(key, "GET", USERINFO_URL)}
    )
    assert no_ath.status_code == 401 and no_ath.json()["error"] == "invalid_dpop_proof"
    assert 'DPoP error="invalid_dpop_proof"' in no_ath.headers["www-authenticate"]


async def test_introspection_shows_the_binding(flow: Flow, dpop: Dpop) -> None:
    key = DpopKey()
    token = (await dpop.tokens(await flow.register(), await flow.user(), key))["access_token"]
    answer = await Lifecycle(flow).introspect(await flow.integration(), token)
    assert answer["active"] is True and answer["token_type"] == "DPoP" and answer["cnf"] == {"jkt": key.jkt}


async def test_required_nonces_are_asked_for_and_handed_out(
    authz_settings: AuthzSettings, flow: Flow, clock: FrozenClock
) -> None:
    settings = msgspec.structs.replace(authz_settings, dpop_nonce_required=True)
    async with serve(create_app(settings, clock=clock)) as client:
        nonced = Dpop(Flow(client, flow.pool, flow.redis), clock)
        key = DpopKey()
        form = await nonced.code(await nonced.flow.register(), await flow.user())
        asked = await nonced.post(form, key)
        _refused(asked, "use_dpop_nonce")
        nonce = asked.headers["dpop-nonce"]
        tokens = await nonced.post(form, None, nonced.proof(key, nonce=nonce))
        assert tokens.status_code == 200, tokens.text
        assert tokens.headers["dpop-nonce"] == nonce  # the same period: the same nonce
        bearer = await nonced.post(nonced.refresh_form({"client_id": form["client_id"]}, "x"), None)
        assert "dpop-nonce" not in bearer.headers  # no proof, no nonce


async def test_redis_remembers_a_proof_until_its_last_accepted_second_has_passed(redis_client) -> None:
    """The replay memory in Redis (RFC 9449 §11.1) outlives the proof's acceptance: a
    proof made at the window's future edge is accepted through the second iat + window,
    so its jti is kept window * 2 + 1 seconds from the start of the checker's second (it
    used to be kept window * 2, one second short). Compared on Redis's own clock: when the
    key expires, less the Redis time read before the check (no sleep, nothing timed)."""
    seconds, _ = await redis_client.time()
    clock = FrozenClock(int(seconds))  # the checker's clock: the second the check happens in
    dpop = DpopChecker(RedisDpopStore(redis_client, "dpop-test", clock=clock), DpopPolicy(window=60), clock)
    proof = DpopKey("ES256").proof("POST", TOKEN_URL, iat=clock.now() + 60)
    await dpop.check(ProofTarget(method="POST", url=TOKEN_URL, proofs=(proof,)))
    (key,) = [k async for k in redis_client.scan_iter(match="dpop-test:jti:*")]
    expires_ms = await redis_client.pexpiretime(key)
    assert expires_ms >= (clock.now() + 2 * 60 + 1) * 1000  # past the end of the second now + 120
