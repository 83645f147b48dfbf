"""Client ID Metadata Documents: a client_id that is the HTTPS URL of the client's
metadata, fetched safely (a local HTTPS server with a test CA stands in for the web)."""

from __future__ import annotations

import msgspec
import pytest
import structlog

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.settings import load_settings

from ..support.tls import Reply, site_web
from .cimd import LOOPBACK, cimd_settings, publish
from .conftest import serve
from .flow import BASE_URL, Flow, pkce_pair, query_of


async def _start(flow: Flow, client_id: str, redirect_uri: str = LOOPBACK):
    verifier, challenge = pkce_pair()
    params = flow.authorize_params({"client_id": client_id, "redirect_uris": [redirect_uri]}, challenge)
    return await flow.start(params), verifier, params


async def _refused(flow: Flow, client_id: str) -> str:
    """Start a flow that must be refused with the error page; the logged reason (the
    page says the same for every reason)."""
    with structlog.testing.capture_logs() as events:
        start, _, _ = await _start(flow, client_id)
    assert start.status_code == 400 and "location" not in start.headers
    assert "could not be fetched or used" in start.text
    (detail,) = [e["detail"] for e in events if e["event"] == "request_refused"]
    return detail


async def test_document_client_completes_the_flow(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = publish(server, "/oauth/client.json")
    user = await cimd_flow.user()
    start, verifier, params = await _start(cimd_flow, url)
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    await cimd_flow.login(interaction, user)
    page, _ = await cimd_flow.page(interaction)
    assert "Agent Smith" in page.text and "Verified domain" in page.text and "localhost" in page.text
    done = await cimd_flow.consent(interaction)
    callback = query_of(done.headers["location"])
    assert callback["iss"] == BASE_URL and callback["state"] == params["state"]
    tokens = await cimd_flow.token(
        grant_type="authorization_code",
        code=callback["code"],
        redirect_uri=LOOPBACK,
        client_id=url,
        code_verifier=verifier,
    )
    assert tokens.status_code == 200, tokens.text
    assert "refresh_token" not in tokens.json()  # the document did not list the refresh_token grant
    assert server.hits["/oauth/client.json"] == 1  # cached for its max-age


async def test_document_client_with_refresh_rotates_its_tokens(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = publish(server, "/refreshing.json", grant_types=["authorization_code", "refresh_token"])
    tokens = await cimd_flow.tokens({"client_id": url, "redirect_uris": [LOOPBACK]})
    refreshed = await cimd_flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=url)
    assert refreshed.status_code == 200 and refreshed.json()["refresh_token"] != tokens["refresh_token"]


async def test_https_redirect_on_a_trusted_documents_own_host_is_accepted(cimd_flow: Flow, site) -> None:
    server, _ = site
    await cimd_flow.client.app.state.authz.trusted_domains.add("localhost", created_by="test")
    same_host = f"https://localhost:{server.port}/done"
    url = publish(server, "/c.json", redirect_uris=[same_host], grant_types=["authorization_code", "refresh_token"])
    start, _, _ = await _start(cimd_flow, url, same_host)
    assert start.status_code == 303 and start.headers["location"].startswith("/oauth/interaction/")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"client_id": "https://localhost/other.json"}, "client_id is not the URL"),
        ({"redirect_uris": ["https://evil.example/cb"]}, "must be loopback"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "must be loopback"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "public"),
        ({"client_secret": "s3cret"}, "client secret"),
        ({"grant_types": ["client_credentials"]}, "authorization_code grant"),
        ({"redirect_uris": ["https://evil.example/cb", "myapp://callback"]}, "none of the document's redirect URIs"),
        ({"response_types": ["token"]}, "response_types"),
    ],
)
async def test_unusable_documents_get_an_error_page(cimd_flow: Flow, site, change: dict, reason: str) -> None:
    server, _ = site
    url = publish(server, "/bad.json", **change)
    assert reason in await _refused(cimd_flow, url)
    assert await cimd_flow.count("authz_clients") == 0


def _vscode_shaped(server, path: str) -> tuple[str, str]:
    """A document shaped like the one VS Code publishes: one document for every server,
    a loopback redirect without a path and an HTTPS web redirect, the device grant beside
    the code and refresh grants, fields this server does not use. (its URL, the web redirect)"""
    web = "https://vscode.example/redirect"
    url = publish(
        server,
        path,
        client_name="Visual Studio Code",
        client_uri="https://code.visualstudio.com/",
        logo_uri="https://code.visualstudio.com/assets/favicon.ico",
        redirect_uris=["http://127.0.0.1:33418", web],
        grant_types=["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        response_types=["code"],
        application_type="native",
        token_endpoint_auth_method="none",
        scope="openid offline_access courses:read vendor:extension",
    )
    return url, web


async def test_a_document_is_read_liberally_and_used_strictly(cimd_flow: Flow, site) -> None:
    """What the server would not accept is ignored, not fatal: the loopback redirect
    signs in (any port, RFC 8252 §7.3), the device grant is never offered, and the
    document's scope is the default of a request without one, less what is unknown here."""
    server, _ = site
    url, _ = _vscode_shaped(server, "/vscode.json")
    loopback = "http://127.0.0.1:50123"
    user = await cimd_flow.user()
    verifier, challenge = pkce_pair()
    params = cimd_flow.authorize_params({"client_id": url, "redirect_uris": [loopback]}, challenge)
    del params["scope"]
    start = await cimd_flow.start(params)
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    await cimd_flow.login(interaction, user)
    page, _ = await cimd_flow.page(interaction)
    assert "Visual Studio Code" in page.text and "vscode.example" not in page.text  # the ignored one is never shown
    callback = query_of((await cimd_flow.consent(interaction)).headers["location"])
    tokens = await cimd_flow.token(
        grant_type="authorization_code",
        code=callback["code"],
        redirect_uri=loopback,
        client_id=url,
        code_verifier=verifier,
    )
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["scope"] == "openid courses:read" and "refresh_token" in tokens.json()
    row = await cimd_flow.pool.fetchrow(
        "SELECT redirect_uris, grant_types FROM authz_clients WHERE client_id = $1", url
    )
    assert list(row["redirect_uris"]) == ["http://127.0.0.1:33418"]
    assert list(row["grant_types"]) == ["authorization_code", "refresh_token"]


async def test_a_document_with_only_untrusted_redirect_uris_gets_a_page_that_says_why(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = publish(server, "/web-only.json", redirect_uris=["https://vscode.example/redirect", "vscode://callback"])
    start, _, _ = await _start(cimd_flow, url, "https://vscode.example/redirect")
    assert start.status_code == 400 and "location" not in start.headers
    words = " ".join(start.text.split())
    assert "lists no address Course School may send you back to" in words
    assert "The app&#39;s developer needs to add one" in words or "The app's developer needs to add one" in words
    assert await cimd_flow.count("authz_clients") == 0


async def test_a_request_naming_an_ignored_redirect_uri_gets_the_error_page(cimd_flow: Flow, site) -> None:
    server, _ = site
    url, web = _vscode_shaped(server, "/vscode-web.json")
    start, _, _ = await _start(cimd_flow, url, web)
    assert start.status_code == 400 and "location" not in start.headers
    assert "redirect" in start.text.lower()
    assert await cimd_flow.count("authz_clients") == 0


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(b"x" * 6000), "larger than"),
        (Reply(b"{}", delay=1.5), "timed out"),
        (Reply(b"", 302, {"Location": "https://localhost/elsewhere.json"}), "answered 302"),
        (Reply(b"not json"), "not valid JSON"),
        (Reply(b"{}", headers={"Content-Type": "text/html"}), "application/json"),
        (Reply(b"{}", 404), "answered 404"),
    ],
)
async def test_fetch_refusals(cimd_flow: Flow, site, reply: Reply, reason: str) -> None:
    server, _ = site
    server.replies["/doc.json"] = reply
    assert reason in await _refused(cimd_flow, server.url("/doc.json"))


async def test_failures_are_cached_briefly(cimd_flow: Flow, site) -> None:
    server, _ = site
    server.replies["/late.json"] = Reply(b"{}", 503)
    first, _, _ = await _start(cimd_flow, server.url("/late.json"))
    publish(server, "/late.json")
    second, _, _ = await _start(cimd_flow, server.url("/late.json"))
    assert first.status_code == second.status_code == 400
    assert server.hits["/late.json"] == 1


@pytest.mark.parametrize(
    "client_id",
    [
        "https://localhost/",
        "https://user@localhost/c.json",
        "https://localhost/a/../c.json",
        "https://localhost/c.json#x",
    ],
)
async def test_malformed_client_id_urls_are_refused_without_a_fetch(cimd_flow: Flow, site, client_id: str) -> None:
    server, _ = site
    start, _, _ = await _start(cimd_flow, client_id)
    assert start.status_code == 400
    assert server.hits == {}


async def test_private_addresses_are_refused_whatever_the_settings(
    authz_settings, site, clean_db, redis_client, clock
) -> None:
    server, ca = site
    url = publish(server, "/client.json")
    # The platform's own document web: the public web only. No setting widens it: an
    # environment naming the test-only switches there once were is not read.
    environ = {"CIMD_ALLOW_PRIVATE": "true", "CIMD_CA_BUNDLE": str(ca)}
    settings = load_settings(AuthzSettings, environ, **msgspec.structs.asdict(cimd_settings(authz_settings)))
    async with serve(create_app(settings, clock=clock)) as client:
        assert "not a public address" in await _refused(Flow(client, clean_db, redis_client), url)
    assert server.hits == {}


async def test_untrusted_certificate_is_refused(authz_settings, site, clean_db, redis_client, clock) -> None:
    server, ca = site
    url = publish(server, "/client.json")
    untrusting = site_web(ca)._replace(verify=True)  # the system's CAs only
    async with serve(create_app(cimd_settings(authz_settings), clock=clock, document_web=untrusting)) as client:
        assert "(ConnectError)" in await _refused(Flow(client, clean_db, redis_client), url)


async def test_token_endpoint_refuses_an_unusable_document_client(cimd_flow: Flow, site) -> None:
    server, _ = site
    server.replies["/gone.json"] = Reply(b"{}", 404)
    response = await cimd_flow.token(
        grant_type="authorization_code",
        code="x",
        redirect_uri=LOOPBACK,
        client_id=server.url("/gone.json"),
        code_verifier="v" * 43,
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"


async def test_fetches_are_counted_by_result(cimd_flow: Flow, site) -> None:
    from prometheus_client import REGISTRY

    def fetches(result: str) -> float:
        return REGISTRY.get_sample_value("courseschool_client_metadata_fetches_total", {"result": result}) or 0.0

    before = fetches("ok"), fetches("failed")
    server, _ = site
    start, _, _ = await _start(cimd_flow, publish(server, "/counted.json"))
    assert start.status_code == 303
    published = publish(server, "/counted-bad.json")
    await _refused(cimd_flow, published.replace("/counted-bad.json", "/not-there.json"))  # 404: a failed fetch
    assert (fetches("ok") - before[0], fetches("failed") - before[1]) == (1, 1)
