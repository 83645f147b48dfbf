"""Discovery: the documents field by field against their RFCs, the merged OpenAPI
document, caching, and the last good copy while an upstream is down."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from litestar.routes import ASGIRoute
from openapi_spec_validator import validate

from courseschool.common.asgi import AppLifespan
from courseschool.common.scopes import ALL_SCOPE_NAMES
from courseschool.common.web import server_app
from courseschool.discovery.app import create_app as create_discovery
from courseschool.discovery.settings import DiscoverySettings
from courseschool.platform.app import build

from .flow import BASE_URL


@pytest.fixture(params=["apps' own routes", "front door"])
async def platform(request, database_url, redis_url, kek, clean_db, redis_client) -> AsyncIterator[httpx.AsyncClient]:
    """The all-in-one in-process: the router alone (every document from its app's own
    route), or as a server runs it, with the held documents answered in front
    (`common.web.server_app`); each document test holds for both."""
    shared = {
        "base_url": BASE_URL,
        "database_url": database_url,
        "redis_url": redis_url,
        "key_encryption_key": kek,
        "internal_token": "internal-test-token",
    }
    router = build(shared)
    app = server_app(router, router.apps, "") if request.param == "front door" else router
    async with AppLifespan(router):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            client.router = router
            yield client


async def test_authorization_server_metadata_follows_rfc8414(platform: httpx.AsyncClient) -> None:
    response = await platform.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    doc = response.json()
    assert doc["issuer"] == BASE_URL  # byte for byte, no trailing slash
    for name in (
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "registration_endpoint",
        "revocation_endpoint",
        "introspection_endpoint",
        "userinfo_endpoint",
        "service_documentation",
    ):
        assert doc[name].startswith(BASE_URL + "/"), name
    assert doc["registration_endpoint"] == f"{BASE_URL}/api/oauth/register"
    assert doc["response_types_supported"] == ["code"]
    assert doc["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["token_endpoint_auth_methods_supported"] == ["none", "client_secret_post", "client_secret_basic"]
    assert doc["scopes_supported"] == list(ALL_SCOPE_NAMES)
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["client_id_metadata_document_supported"] is True
    for name in ("jwks_uri", "service_documentation"):
        assert (await platform.get(doc[name].removeprefix(BASE_URL))).status_code == 200


async def test_openid_configuration_agrees_and_has_oidc_members(platform: httpx.AsyncClient) -> None:
    oauth = (await platform.get("/.well-known/oauth-authorization-server")).json()
    oidc = (await platform.get("/.well-known/openid-configuration")).json()
    for name in (
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "response_types_supported",
        "subject_types_supported",
        "id_token_signing_alg_values_supported",
    ):
        assert name in oidc, name
    assert "RS256" in oidc["id_token_signing_alg_values_supported"]
    assert {k: v for k, v in oidc.items() if k in oauth} == oauth


async def test_protected_resource_metadata_follows_rfc9728(platform: httpx.AsyncClient) -> None:
    doc = (await platform.get("/.well-known/oauth-protected-resource")).json()
    assert doc["resource"] == BASE_URL and doc["authorization_servers"] == [BASE_URL]
    assert doc["bearer_methods_supported"] == ["header"]
    # Least privilege first: sign-in, name, e-mail and every area's :read, no write (the
    # 403 insufficient_scope challenge names a write scope when one is needed).
    reads = [s for s in ALL_SCOPE_NAMES if s.endswith(":read")]
    assert doc["scopes_supported"] == ["openid", "profile", "email", *reads]
    assert doc["resource_name"] and doc["resource_documentation"] == f"{BASE_URL}/auth.md"


async def test_documents_carry_etags_and_answer_304(platform: httpx.AsyncClient) -> None:
    for path in ("/.well-known/oauth-authorization-server", "/openapi.json", "/auth.md"):
        first = await platform.get(path)
        assert first.headers["cache-control"] == "public, max-age=300"
        again = await platform.get(path, headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == first.headers["etag"]
        # RFC 9110 §13.1.2: a list of tags, weak comparison, and "*" all match.
        for value in (f'"other", W/{first.headers["etag"]}', "*"):
            assert (await platform.get(path, headers={"If-None-Match": value})).status_code == 304, value
        stale = await platform.get(path, headers={"If-None-Match": '"not-the-current-tag"'})
        assert stale.status_code == 200 and stale.content == first.content


async def test_documents_answer_head_and_refuse_other_methods_in_json(platform: httpx.AsyncClient) -> None:
    for path in ("/.well-known/openid-configuration", "/openapi.json", "/auth.md"):
        full = await platform.get(path)
        head = await platform.head(path)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == str(len(full.content))
        assert head.headers["content-type"] == full.headers["content-type"]
        refused = await platform.post(path, content=b"{}")
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
        assert refused.json()["error"] == "method_not_allowed"
    assert (await platform.get("/auth.md")).headers["content-type"] == "text/markdown; charset=utf-8"


async def test_documents_pass_through_request_ids_and_metrics(platform: httpx.AsyncClient) -> None:
    from prometheus_client import REGISTRY

    def served() -> float:
        return (
            REGISTRY.get_sample_value(
                "http_requests_total",
                {
                    "service": "discovery",
                    "route": "/.well-known/oauth-authorization-server",
                    "method": "GET",
                    "status": "200",
                },
            )
            or 0.0
        )

    before = served()
    response = await platform.get("/.well-known/oauth-authorization-server", headers={"X-Request-ID": "doc-42"})
    assert response.headers["x-request-id"] == "doc-42"
    assert served() == before + 1


def _template(path: str) -> str:
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


async def test_openapi_is_valid_and_describes_every_public_route(platform: httpx.AsyncClient) -> None:
    doc = (await platform.get("/openapi.json")).json()
    validate(doc)
    assert doc["openapi"].startswith("3.1")
    flows = doc["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    assert set(flows["scopes"]) == set(ALL_SCOPE_NAMES) and flows["tokenUrl"] == f"{BASE_URL}/api/oauth/token"
    described = {
        (path, method.upper())
        for path, item in doc["paths"].items()
        for method in item
        if method in ("get", "post", "patch", "delete", "put")
    }
    served = set()
    for app in platform.router.apps:
        for route in app.routes:
            path = _template(route.path)
            if path.startswith(
                (
                    "/internal",
                    "/healthz",
                    "/readyz",
                    "/metrics",
                    "/schema",
                    "/oauth/interaction",
                    "/oauth/assets",
                    "/api/oauth/schema",
                    "/api/v1/schema",
                )
            ):
                continue
            if path in ("/authorize", "/token", "/register"):
                continue  # the MCP 2025-03-26 fallback paths: aliases, listed in no metadata on purpose
            # Raw ASGI routes: the documents (send_document) answer GET and HEAD only; the form
            # endpoints (form_post) POST, which their route's `opt` names.
            raw = isinstance(route, ASGIRoute)
            methods = set(route.route_handler.opt.get("methods", ("GET",))) if raw else route.methods
            served |= {(path, m) for m in methods if m not in ("OPTIONS", "HEAD")}
    assert served - described == set(), "routes missing from /openapi.json"
    assert described - served == set(), "/openapi.json describes routes nobody serves"
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            if path.startswith("/api/v1/") and path != "/api/v1/storage/files/{file_id}":
                scopes = [s for req in op["security"] for s in req.get("oauth2", [])]
                assert len(scopes) == 1 and scopes[0] in ALL_SCOPE_NAMES, (path, method)
                assert "403" in op["responses"] and "401" in op["responses"]


class Switch(httpx.AsyncBaseTransport):
    """An upstream that can be made to fail."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.down = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("upstream stopped")
        return await self.inner.handle_async_request(request)


async def test_last_good_copy_is_served_while_an_upstream_is_down(platform: httpx.AsyncClient, redis_url) -> None:
    authz_app = next(a for p, a in platform.router.routes if p == "/api/oauth/")
    resource_app = next(a for p, a in platform.router.routes if p == "/api/v1/")
    switches = {
        "authz": Switch(httpx.ASGITransport(app=authz_app)),
        "resource": Switch(httpx.ASGITransport(app=resource_app)),
    }

    def discovery() -> httpx.AsyncClient:
        settings = DiscoverySettings(
            base_url=BASE_URL, internal_token="internal-test-token", redis_url=redis_url, metadata_cache_ttl=0
        )
        upstreams = {k: httpx.AsyncClient(transport=t, base_url=f"http://{k}") for k, t in switches.items()}
        return create_discovery(settings, upstreams=upstreams)

    path = "/.well-known/oauth-authorization-server"
    first_app = discovery()
    async with (
        AppLifespan(first_app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=first_app), base_url=BASE_URL) as d,
    ):
        good = await d.get(path)
        assert good.status_code == 200
        assert (await d.get("/readyz")).status_code == 200  # every document fetched once
        switches["authz"].down = True
        stale = await d.get(path)  # TTL 0: it tries the upstream, fails, serves the copy it holds
        assert stale.status_code == 200 and stale.content == good.content
        assert (await d.get("/healthz")).status_code == 200
    second_app = discovery()  # a fresh replica: nothing in memory, the copy comes from Redis
    async with (
        AppLifespan(second_app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=second_app), base_url=BASE_URL) as d,
    ):
        from_redis = await d.get(path)
        assert from_redis.status_code == 200 and from_redis.content == good.content
        assert (await d.get("/readyz")).status_code == 200
    switches["authz"].down = False
    third_settings = DiscoverySettings(base_url=BASE_URL, internal_token="internal-test-token", metadata_cache_ttl=0)
    switches["authz"].down = True
    third = create_discovery(
        third_settings,
        upstreams={k: httpx.AsyncClient(transport=t, base_url=f"http://{k}") for k, t in switches.items()},
    )
    async with AppLifespan(third), httpx.AsyncClient(transport=httpx.ASGITransport(app=third), base_url=BASE_URL) as d:
        none = await d.get(path)  # no copy anywhere: a clear 503
        assert none.status_code == 503 and none.json()["error"] == "temporarily_unavailable"
        assert (await d.get("/readyz")).status_code == 503


GENERATED_DOCS = [
    f"{prefix}{suffix}"
    for prefix in ("/api/oauth/schema", "/api/v1/schema", "/schema")
    for suffix in (
        "",
        "/",
        "/openapi.json",
        "/openapi.yaml",
        "/openapi.yml",
        "/swagger",
        "/redoc",
        "/elements",
        "/rapidoc",
        "/stoplight",
        "/scalar",
    )
]


async def test_no_service_serves_generated_api_documents(platform: httpx.AsyncClient) -> None:
    """/openapi.json (discovery's merged document) is the one description; no page of ours
    loads a documentation UI's scripts from another origin. Every path a framework's own
    document or UI would take, asked of one set-up of the platform (each listed when it
    answers)."""
    served = []
    for path in GENERATED_DOCS:
        response = await platform.get(path)
        if response.status_code != 404 or "<script" in response.text:
            served.append(f"{path} answered {response.status_code}")
    assert len(GENERATED_DOCS) == 33 and served == []


async def test_each_service_app_has_no_openapi_routes(platform: httpx.AsyncClient) -> None:
    for app in platform.router.apps:
        paths = {route.path for route in app.routes}
        assert not [p for p in paths if "schema" in p], paths
        assert app.openapi_config is None
