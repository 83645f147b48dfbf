"""CORS (common/cors.py, the Fetch standard's CORS protocol) over the all-in-one in
process, as a server runs it (the held documents answered in front): who may read
which path from another origin, preflights included, and the refusals: an unknown
origin, credentials, the pages, /oauth/authorize and /internal."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from courseschool.authz.protocol.models import Client
from courseschool.authz.storage.admin import PgAdminStore
from courseschool.authz.storage.client_origins import PgClientOriginStore
from courseschool.authz.storage.clients import PgClientStore
from courseschool.authz.storage.trusted_domains import PgTrustedDomainStore
from courseschool.common.asgi import AppLifespan
from courseschool.common.clock import SystemClock
from courseschool.common.web import server_app
from courseschool.platform.app import build

from .flow import BASE_URL

LOOPBACK_ORIGINS = ["http://localhost:5173", "http://127.0.0.1:8123", "http://[::1]:3000", "http://localhost"]
UNKNOWN_ORIGINS = [
    "https://evil.example",
    "http://localhost.evil.example",
    "http://127.0.0.1.evil.example:80",
    "https://localhost:5173",  # loopback is http only
    "null",
]
DOCUMENTS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource",
    "/api/oauth/jwks",
    "/openapi.json",
]
# (method, path) clients call from browsers; a body is not needed to see the headers.
CLIENT_CALLS = [
    ("POST", "/api/oauth/register"),
    ("POST", "/register"),
    ("GET", "/api/oauth/register/some-client"),
    ("POST", "/api/oauth/token"),
    ("POST", "/token"),
    ("POST", "/api/oauth/revoke"),
    ("GET", "/api/oauth/userinfo"),
    ("POST", "/api/oauth/userinfo"),
    ("GET", "/api/v1/courses"),
    ("POST", "/api/v1/courses"),
]
SAME_ORIGIN_ONLY = [
    ("GET", "/oauth/authorize"),
    ("GET", "/authorize"),
    ("GET", "/oauth/signin"),
    ("GET", "/oauth/apps"),
    ("GET", "/oauth/logout"),
    ("GET", "/oauth/assets/style.css"),
    ("POST", "/api/oauth/introspect"),
    ("GET", "/internal/metadata/oauth-authorization-server"),
    ("GET", "/internal/client-origins"),
]


def _preflight(origin: str, method: str, headers: str = "authorization, content-type, dpop") -> dict[str, str]:
    return {"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}


def _cors_fields(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def _varies_on_origin(response: httpx.Response) -> bool:
    return any("origin" in [v.strip().lower() for v in value.split(",")] for value in response.headers.get_list("vary"))


@pytest.fixture(scope="module")
async def platform(database_url: str, redis_url: str, kek: str) -> AsyncIterator[httpx.AsyncClient]:
    """One platform for the module's tests (each asks only how it answers; building the
    three apps took longer than the tests themselves); each test still starts from
    empty tables and an empty Redis (`_clean`)."""
    shared = {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": redis_url,
        "key_encryption_key": kek,
        "internal_token": "internal-test-token",
    }
    router = build(shared)
    async with AppLifespan(router):
        transport = httpx.ASGITransport(app=server_app(router, router.apps, ""))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client


@pytest.fixture(autouse=True)
def _clean(clean_db: asyncpg.Pool, redis_client: object) -> None:
    pass


@pytest.mark.parametrize("path", DOCUMENTS)
async def test_documents_answer_any_origin_and_their_preflights(platform: httpx.AsyncClient, path: str) -> None:
    for origin in ["https://inspector.example", "http://localhost:6274"]:
        got = await platform.get(path, headers={"Origin": origin})
        assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-credentials" not in got.headers
        preflight = await platform.options(path, headers=_preflight(origin, "GET", "authorization"))
        assert preflight.status_code == 204, preflight.text
        fields = _cors_fields(preflight)
        assert fields["access-control-allow-origin"] == "*"
        assert "GET" in fields["access-control-allow-methods"]
        assert "authorization" in fields["access-control-allow-headers"].lower()
        assert "access-control-allow-credentials" not in fields
        assert not _varies_on_origin(got)  # the same answer for every origin


@pytest.mark.parametrize(("method", "path"), CLIENT_CALLS)
async def test_client_endpoints_answer_loopback_origins_without_credentials(
    platform: httpx.AsyncClient, method: str, path: str
) -> None:
    for origin in LOOPBACK_ORIGINS:
        preflight = await platform.options(path, headers=_preflight(origin, method))
        assert preflight.status_code == 204, preflight.text
        fields = _cors_fields(preflight)
        assert fields["access-control-allow-origin"] == origin
        assert method in [m.strip() for m in fields["access-control-allow-methods"].split(",")]
        allowed = {h.strip().lower() for h in fields["access-control-allow-headers"].split(",")}
        assert {"authorization", "dpop", "content-type"} <= allowed
        assert "access-control-allow-credentials" not in fields
        assert _varies_on_origin(preflight)

        # The actual request (refused by the endpoint for want of a body or token: its
        # error must be readable too, with the challenge's header fields).
        actual = await platform.request(method, path, headers={"Origin": origin})
        assert actual.headers.get("access-control-allow-origin") == origin, (actual.status_code, actual.headers)
        exposed = {h.strip().lower() for h in actual.headers["access-control-expose-headers"].split(",")}
        assert {"www-authenticate", "dpop-nonce"} <= exposed
        assert "access-control-allow-credentials" not in actual.headers
        assert _varies_on_origin(actual)


@pytest.mark.parametrize(("method", "path"), CLIENT_CALLS)
async def test_other_origins_get_no_allow_origin(platform: httpx.AsyncClient, method: str, path: str) -> None:
    for origin in UNKNOWN_ORIGINS:
        preflight = await platform.options(path, headers=_preflight(origin, method))
        assert "access-control-allow-origin" not in preflight.headers, (origin, preflight.headers)
        assert "access-control-allow-methods" not in preflight.headers
        assert _varies_on_origin(preflight)
        actual = await platform.request(method, path, headers={"Origin": origin})
        assert _cors_fields(actual) == {}, (origin, actual.headers)
        assert _varies_on_origin(actual)  # a cache must not serve this answer to a loopback origin
    without_origin = await platform.request(method, path)
    assert _cors_fields(without_origin) == {} and _varies_on_origin(without_origin)


async def test_a_credentialed_request_is_never_allowed_credentials(platform: httpx.AsyncClient) -> None:
    """Fetch §3.2.5: a request whose credentials mode is "include" needs
    `Access-Control-Allow-Credentials: true`; it is never sent, so the browser refuses
    to show such an answer (no cookie of ours is usable from another origin)."""
    origin = "http://localhost:5173"
    for method, path in [*CLIENT_CALLS, ("GET", DOCUMENTS[0])]:
        answer = await platform.request(method, path, headers={"Origin": origin, "Cookie": "cs_session=abc"})
        assert "access-control-allow-credentials" not in answer.headers, path
        preflight = await platform.options(path, headers=_preflight(origin, method))
        assert "access-control-allow-credentials" not in preflight.headers, path


@pytest.mark.parametrize(("method", "path"), SAME_ORIGIN_ONLY)
async def test_pages_authorize_introspection_and_internal_send_no_cors_fields(
    platform: httpx.AsyncClient, method: str, path: str
) -> None:
    for origin in ["http://localhost:5173", "https://evil.example"]:
        answer = await platform.request(method, path, headers={"Origin": origin})
        assert _cors_fields(answer) == {}, (path, answer.status_code, answer.headers)
        preflight = await platform.options(path, headers=_preflight(origin, method))
        assert _cors_fields(preflight) == {}, (path, preflight.status_code, preflight.headers)


async def test_an_options_request_that_is_no_preflight_still_names_the_methods(platform: httpx.AsyncClient) -> None:
    answer = await platform.options("/api/oauth/token", headers={"Origin": "http://localhost:5173"})
    assert answer.status_code == 204 and answer.headers["allow"] == "POST, OPTIONS"
    assert answer.headers["access-control-allow-origin"] == "http://localhost:5173"


async def test_registered_https_origins_are_answered(platform: httpx.AsyncClient, clean_db: asyncpg.Pool) -> None:
    """An administrator's integration with an https callback, and a metadata document's
    client on a trusted host: their origins are answered by the authorization server
    and by the resource API (which learns them from the authorization server)."""
    clients = PgClientStore(clean_db)
    await _integration(clients, "crm", ["https://crm.example/oauth/callback", "https://crm.example:8443/cb"])
    await PgTrustedDomainStore(clean_db).add("tools.example", created_by="test")
    await clients.record_document_client(_document_client("https://tools.example/client.json", "tools.example"))
    await asyncio.sleep(1.1)  # past common.cors.ClientOrigins' reload on a miss, whatever asked before
    for origin in ["https://crm.example", "https://crm.example:8443", "https://tools.example"]:
        for method, path in [("POST", "/api/oauth/token"), ("GET", "/api/oauth/userinfo"), ("GET", "/api/v1/courses")]:
            preflight = await platform.options(path, headers=_preflight(origin, method))
            assert preflight.headers.get("access-control-allow-origin") == origin, (origin, path)
            actual = await platform.request(method, path, headers={"Origin": origin})
            assert actual.headers.get("access-control-allow-origin") == origin, (origin, path)
    # Same host, another scheme or port: another origin.
    for origin in ["http://crm.example", "https://crm.example:444", "https://sub.crm.example"]:
        preflight = await platform.options("/api/oauth/token", headers=_preflight(origin, "POST"))
        assert "access-control-allow-origin" not in preflight.headers, origin


async def test_the_registered_origins_are_those_of_integrations_and_trusted_documents(clean_db: asyncpg.Pool) -> None:
    clients = PgClientStore(clean_db)
    domains = PgTrustedDomainStore(clean_db)
    store = PgClientOriginStore(clean_db)
    await _integration(clients, "crm", ["https://crm.example/cb", "https://CRM.example:443/other"])
    await _integration(clients, "old", ["https://old.example/cb"])
    await PgAdminStore(clean_db, clients, SystemClock()).disable_client("old")
    await domains.add("tools.example", created_by="test")
    await clients.record_document_client(_document_client("https://tools.example/c.json", "tools.example"))
    await clients.record_document_client(_document_client("https://other.example/c.json", "other.example"))
    assert await store.origins() == {"https://crm.example", "https://tools.example"}
    await domains.remove("tools.example")  # trust taken back: the document's https callbacks no longer count
    assert await store.origins() == {"https://crm.example"}


async def _integration(clients: PgClientStore, client_id: str, redirect_uris: list[str]) -> None:
    await clients.create(
        client_id=client_id,
        client_name=client_id,
        redirect_uris=redirect_uris,
        token_endpoint_auth_method="client_secret_post",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        application_type="web",
        scope=None,
        id_token_signed_response_alg="RS256",
        secret_hash=b"\x00" * 32,
        is_integration=True,
        now=int(time.time()),
    )


def _document_client(url: str, host: str) -> Client:
    return Client(
        client_id=url,
        client_name=host,
        redirect_uris=[f"https://{host}/callback", "http://127.0.0.1/callback"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        application_type="web",
        scope=None,
        id_token_signed_response_alg="RS256",
        secret_hash=None,
        is_integration=False,
        client_id_issued_at=int(time.time()),
        verified_origin=host,
    )
