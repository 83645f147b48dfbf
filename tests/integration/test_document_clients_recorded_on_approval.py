"""Security review finding 3: every anonymous GET of /oauth/authorize with a fresh
Client ID Metadata Document URL created a client row, and pruning skipped them.

Now a document's client is recorded only when a user approves it (before the grant
that refers to it); until then it lives in the bounded document cache (no longer
than a pending request can need it). Recorded document clients that never complete
a grant are pruned like unused registrations; one an administrator disabled is kept,
so the URL stays blocked."""

from __future__ import annotations

from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.endpoints.registration import remove_unused_clients

from ..support.tls import HttpsServer
from .cimd import LOOPBACK, publish
from .flow import Flow, pkce_pair, query_of


def _publish(server: HttpsServer, path: str, *, max_age: int = 86400) -> str:
    return publish(server, path, max_age=max_age, grant_types=["authorization_code", "refresh_token"])


def _reg(url: str) -> dict[str, object]:
    return {"client_id": url, "redirect_uris": [LOOPBACK]}


async def _document_cache_ttls(flow: Flow) -> list[int]:
    return [await flow.redis.ttl(k) async for k in flow.redis.scan_iter(match="authz:cimd:*")]


async def test_anonymous_authorize_requests_store_no_client(cimd_flow: Flow, site) -> None:
    server, _ = site
    for i in range(20):
        _, challenge = pkce_pair()
        start = await cimd_flow.start(cimd_flow.authorize_params(_reg(_publish(server, f"/fresh-{i}.json")), challenge))
        assert start.status_code == 303 and start.headers["location"].startswith("/oauth/interaction/")
    assert await cimd_flow.count("authz_clients") == 0


async def test_an_unapproved_document_is_cached_no_longer_than_a_pending_request(cimd_flow: Flow, site) -> None:
    server, _ = site
    _, challenge = pkce_pair()
    await cimd_flow.start(
        cimd_flow.authorize_params(_reg(_publish(server, "/long-lived.json", max_age=86400)), challenge)
    )
    (ttl,) = await _document_cache_ttls(cimd_flow)
    assert 0 < ttl <= 900  # INTERACTION_TTL, not the document's day


async def test_the_token_endpoint_never_fetches_an_unapproved_document(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = _publish(server, "/never-approved.json")
    answer = await cimd_flow.token(grant_type="refresh_token", refresh_token="guess", client_id=url)
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
    assert "/never-approved.json" not in server.hits
    assert await cimd_flow.count("authz_clients") == 0 and await _document_cache_ttls(cimd_flow) == []


async def test_the_client_is_recorded_when_a_user_approves_and_then_works(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = _publish(server, "/approved.json")
    user = await cimd_flow.user()
    verifier, challenge = pkce_pair()
    interaction = (await cimd_flow.start(cimd_flow.authorize_params(_reg(url), challenge))).headers["location"]
    await cimd_flow.login(interaction, user)
    page, _ = await cimd_flow.page(interaction)
    assert "Agent" in page.text
    assert await cimd_flow.count("authz_clients") == 0  # signed in, not yet approved
    done = await cimd_flow.consent(interaction)
    code = query_of(done.headers["location"])["code"]
    assert await cimd_flow.count("authz_clients") == 1
    tokens = await cimd_flow.token(
        grant_type="authorization_code", code=code, redirect_uri=LOOPBACK, client_id=url, code_verifier=verifier
    )
    assert tokens.status_code == 200, tokens.text
    refreshed = await cimd_flow.token(
        grant_type="refresh_token", refresh_token=tokens.json()["refresh_token"], client_id=url
    )
    assert refreshed.status_code == 200, refreshed.text
    # once approved, the document is cached as long as its Cache-Control allows
    await cimd_flow.redis.delete(*[k async for k in cimd_flow.redis.scan_iter(match="authz:cimd:*")])
    again = await cimd_flow.token(
        grant_type="refresh_token", refresh_token=refreshed.json()["refresh_token"], client_id=url
    )
    assert again.status_code == 200
    (ttl,) = await _document_cache_ttls(cimd_flow)
    assert ttl > 900


async def test_denying_stores_no_client(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = _publish(server, "/denied.json")
    callback, _, _ = await cimd_flow.authorize(_reg(url), await cimd_flow.user(), decision="deny")
    assert callback["error"] == "access_denied"
    assert await cimd_flow.count("authz_clients") == 0


async def test_unused_document_clients_are_pruned_like_registrations(cimd_flow: Flow, site, clock) -> None:
    server, _ = site
    user = await cimd_flow.user()
    unused = _publish(server, "/approved-never-used.json")
    await cimd_flow.authorize(_reg(unused), user)  # approved, but the code is never exchanged
    used = _publish(server, "/approved-and-used.json")
    await cimd_flow.tokens(_reg(used), user)
    blocked = _publish(server, "/blocked.json")
    await cimd_flow.authorize(_reg(blocked), user)
    assert (await AdminService(cimd_flow.client.app.state.authz.administration).disable_client(blocked))[
        "disabled"
    ] is True
    registered = await cimd_flow.register()
    clock.advance(7 * 86400 + 60)
    await cimd_flow.pool.execute("UPDATE authz_clients SET created_at = created_at - interval '8 days'")
    removed = await remove_unused_clients(cimd_flow.client.app.state.authz.administration)
    assert sorted(removed) == sorted([unused, registered["client_id"]])
    remaining = {r["client_id"] for r in await cimd_flow.pool.fetch("SELECT client_id FROM authz_clients")}
    assert remaining == {used, blocked}


async def test_a_disabled_document_client_stays_refused(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = _publish(server, "/disabled.json")
    await cimd_flow.authorize(_reg(url), await cimd_flow.user())
    assert (await AdminService(cimd_flow.client.app.state.authz.administration).disable_client(url))["disabled"] is True
    _, challenge = pkce_pair()
    refused = await cimd_flow.start(cimd_flow.authorize_params(_reg(url), challenge))
    assert refused.status_code == 400 and "location" not in refused.headers
