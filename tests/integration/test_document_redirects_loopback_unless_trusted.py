"""Security review finding 8: a Client ID Metadata Document could list `https://`
callbacks on its own host, and error redirects then went there with no one's consent
(an open redirector). Its redirect URIs now follow the registration rule: loopback
only, unless an administrator marked the document's host a trusted domain (admin API
and command line: `admin domains trust|list|untrust`, each an audit event)."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import structlog

from ..support.tls import HttpsServer
from .admin_api import admin_cli
from .cimd import ADMIN, LOOPBACK, publish
from .flow import BASE_URL, Flow, pkce_pair, query_of


def _publish(server: HttpsServer, path: str, redirect_uris: list[str]) -> str:
    return publish(server, path, redirect_uris=redirect_uris)


async def _trust(flow: Flow, host: str) -> dict:
    response = await flow.client.post("/internal/admin/domains", json={"host": host}, headers=ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def _params(url: str, redirect_uri: str, **extra: str) -> dict[str, str]:
    _, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": url,
        "redirect_uri": redirect_uri,
        "scope": "openid",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st",
    }
    params.update(extra)
    return params


async def test_https_callback_of_an_untrusted_host_is_never_redirected_to(cimd_flow: Flow, site) -> None:
    server, _ = site
    callback = f"https://localhost:{server.port}/done"
    url = _publish(server, "/https-client.json", [callback])
    # an error after the (would-be) redirect URI check: it must not travel to the callback
    broken = await cimd_flow.start(_params(url, callback, code_challenge_method="plain"))
    assert broken.status_code == 400 and "location" not in broken.headers
    fine = await cimd_flow.start(_params(url, callback))
    assert fine.status_code == 400 and "location" not in fine.headers
    assert await cimd_flow.count("authz_clients") == 0


async def test_a_mixed_document_is_usable_through_its_loopback_redirect_only(cimd_flow: Flow, site) -> None:
    """Read liberally, used strictly (issue 36): the untrusted https redirect is ignored,
    the loopback one works, and a request naming the ignored one is never redirected."""
    server, _ = site
    untrusted = f"https://localhost:{server.port}/done"
    url = _publish(server, "/mixed.json", [LOOPBACK, untrusted])
    response = await cimd_flow.start(_params(url, LOOPBACK))
    assert response.status_code == 303 and response.headers["location"].startswith("/oauth/interaction/")
    ignored = await cimd_flow.start(_params(url, untrusted))
    assert ignored.status_code == 400 and "location" not in ignored.headers


async def test_loopback_documents_need_no_trust(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = _publish(server, "/loopback.json", [LOOPBACK])
    broken = await cimd_flow.start(_params(url, LOOPBACK, code_challenge_method="plain"))
    assert broken.status_code == 303 and query_of(broken.headers["location"])["error"] == "invalid_request"


async def test_a_trusted_host_may_use_https_callbacks_on_itself_only(cimd_flow: Flow, site) -> None:
    server, _ = site
    callback = f"https://localhost:{server.port}/done"
    url = _publish(server, "/trusted.json", [callback])
    elsewhere = _publish(server, "/elsewhere.json", ["https://evil.example/cb"])
    assert (await _trust(cimd_flow, "LocalHost."))["host"] == "localhost"  # normalised
    user = await cimd_flow.user()
    verifier, challenge = pkce_pair()
    start = await cimd_flow.start(_params(url, callback, code_challenge=challenge))
    assert start.status_code == 303 and start.headers["location"].startswith("/oauth/interaction/")
    await cimd_flow.login(start.headers["location"], user)
    done = await cimd_flow.consent(start.headers["location"])
    assert done.headers["location"].startswith(callback + "?")
    answer = query_of(done.headers["location"])
    assert answer["iss"] == BASE_URL
    tokens = await cimd_flow.token(
        grant_type="authorization_code",
        code=answer["code"],
        redirect_uri=callback,
        client_id=url,
        code_verifier=verifier,
    )
    assert tokens.status_code == 200, tokens.text
    # trust covers the document's own host, not whatever host it names
    refused = await cimd_flow.start(_params(elsewhere, "https://evil.example/cb"))
    assert refused.status_code == 400 and "location" not in refused.headers


async def test_untrusting_a_host_stops_its_https_callbacks(cimd_flow: Flow, site) -> None:
    server, _ = site
    callback = f"https://localhost:{server.port}/done"
    url = _publish(server, "/untrusted-later.json", [callback])
    await _trust(cimd_flow, "localhost")
    assert (await cimd_flow.start(_params(url, callback))).status_code == 303
    removed = await cimd_flow.client.delete("/internal/admin/domains/localhost", headers=ADMIN)
    assert removed.status_code == 200 and removed.json() == {"host": "localhost", "trusted": False}
    again = await cimd_flow.start(_params(url, callback, code_challenge_method="plain"))
    assert again.status_code == 400 and "location" not in again.headers


async def test_domains_are_listed_and_every_change_audited(cimd_flow: Flow) -> None:
    with structlog.testing.capture_logs() as events:
        await _trust(cimd_flow, "apps.example.com")
        await _trust(cimd_flow, "apps.example.com")  # idempotent
        await _trust(cimd_flow, "b.example")
        listed = await cimd_flow.client.get("/internal/admin/domains", headers=ADMIN)
        await cimd_flow.client.delete("/internal/admin/domains/b.example", headers=ADMIN)
    assert [d["host"] for d in listed.json()] == ["apps.example.com", "b.example"]
    assert listed.json()[0]["created_by"] == "admin"
    audited = [(e["event"], e["host"]) for e in events if e.get("audit")]
    assert audited == [
        ("domain_trusted", "apps.example.com"),
        ("domain_trusted", "apps.example.com"),
        ("domain_trusted", "b.example"),
        ("domain_untrusted", "b.example"),
    ]
    assert await cimd_flow.count("authz_trusted_domains") == 1


@pytest.mark.parametrize(
    "host",
    [
        "",
        "https://apps.example.com",
        "apps.example.com:8443",
        "*.example.com",
        "apps example.com",
        "apps..example.com",
        "-apps.example.com",
        "a" * 64 + ".example.com",
        "ex\u00e4mple.com",  # the IDNA A-label (xn--...) is what a URL holds
        "user@example.com",
    ],
)
async def test_malformed_hosts_are_refused_and_nothing_stored(cimd_flow: Flow, host: str) -> None:
    response = await cimd_flow.client.post("/internal/admin/domains", json={"host": host}, headers=ADMIN)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert await cimd_flow.count("authz_trusted_domains") == 0


async def test_untrusting_an_unknown_host_is_404(cimd_flow: Flow) -> None:
    response = await cimd_flow.client.delete("/internal/admin/domains/nowhere.example", headers=ADMIN)
    assert response.status_code == 404


async def test_domains_need_the_admin_credential(cimd_flow: Flow) -> None:
    response = await cimd_flow.client.post("/internal/admin/domains", json={"host": "apps.example.com"})
    assert response.status_code == 401 and await cimd_flow.count("authz_trusted_domains") == 0


async def test_command_line_trusts_lists_and_untrusts(database_url, redis_url, kek, cimd_flow: Flow) -> None:
    run = lambda *a: asyncio.to_thread(admin_cli, database_url, redis_url, kek, *a)  # noqa: E731
    trusted = await run("--json", "domains", "trust", "Apps.Example.com")
    assert trusted.returncode == 0, trusted.stderr
    assert msgspec.json.decode(trusted.stdout)["host"] == "apps.example.com"
    listed = await run("domains", "list")
    assert "host=apps.example.com" in listed.stdout and "created_by=admin-cli" in listed.stdout
    assert (await run("domains", "untrust", "apps.example.com")).returncode == 0
    missing = await run("domains", "untrust", "apps.example.com")
    assert missing.returncode == 1 and "not a trusted domain" in missing.stderr
    bad = await run("domains", "trust", "https://apps.example.com")
    assert bad.returncode == 1
    assert await cimd_flow.count("authz_trusted_domains") == 0
