"""Security review finding 17: JSON nested 10,000 deep is a 400 (or the caller's own
refusal) at every place that decodes JSON from outside, never a 500 with a
`RecursionError` traceback in the log. The same for JSON whose string is not UTF-8
(msgspec raises `UnicodeDecodeError` there, not its `DecodeError`): one refresh token in
about 256 starts with characters that decode to a quote and then such bytes, and
introspecting it answered 500."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import structlog

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.common.bearer import MAX_TOKEN

from ..support.tls import HttpsServer, Reply, https_server, site_web
from .api_env import ApiEnv
from .conftest import AppClient, serve
from .flow import REDIRECT_URI, Flow, pkce_pair

DEPTH = 10_000
ARRAYS = b"[" * DEPTH + b"]" * DEPTH
OBJECTS = b'{"a":' * DEPTH + b"1" + b"}" * DEPTH
ADMIN_TOKEN = "admin-token-for-security-tests-0123456789"
JSON = {"Content-Type": "application/json"}


def inside(field: str, nested: bytes = ARRAYS) -> bytes:
    """A JSON object whose `field` holds the nested value."""
    return b'{"' + field.encode() + b'":' + nested + b"}"


def no_crash_logged(events: list[dict[str, Any]]) -> None:
    crashed = [e for e in events if e.get("event") == "request_crashed" or "exc_info" in e or e.get("level") == "error"]
    assert not crashed, crashed


@pytest.mark.parametrize("body", [ARRAYS, OBJECTS, inside("client_name")], ids=["arrays", "objects", "in-a-field"])
async def test_deep_registration_body_is_invalid_client_metadata(flow: Flow, body: bytes) -> None:
    with structlog.testing.capture_logs() as events:
        response = await flow.client.post("/api/oauth/register", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert "deep" in response.json()["error_description"]
    no_crash_logged(events)
    assert await flow.count("authz_clients") == 0


async def test_registration_still_accepts_ordinary_metadata(flow: Flow) -> None:
    reg = await flow.register(client_name="Shallow [{ brackets }] in a string")
    assert reg["client_name"] == "Shallow [{ brackets }] in a string"


# -- the admin API --------------------------------------------------------------------------------


@pytest.fixture
async def admin_client(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[AppClient]:
    settings = AuthzSettings(**{**msgspec.structs.asdict(authz_settings), "admin_token": ADMIN_TOKEN})
    async with serve(create_app(settings, clock=clock)) as client:
        yield client


@pytest.mark.parametrize("path", ["/schools", "/users", "/integrations", "/keys/rotate"])
async def test_deep_admin_body_is_invalid_request(admin_client: AppClient, path: str) -> None:
    with structlog.testing.capture_logs() as events:
        response = await admin_client.post(
            f"/internal/admin{path}", content=OBJECTS, headers={**JSON, "Authorization": f"Bearer {ADMIN_TOKEN}"}
        )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert "deep" in response.json()["error_description"]  # refused before decoding
    no_crash_logged(events)


# -- the resource API -----------------------------------------------------------------------------


async def test_deep_resource_bodies_are_invalid_request(jwt_env: ApiEnv) -> None:
    env = jwt_env
    token = await env.token("courses:write courses:read school:write")
    bearer = {**JSON, **env.bearer(token)}
    created = await env.api.post("/api/v1/courses", json={"title": "C", "slug": "c"}, headers=bearer)
    assert created.status_code == 201, created.text
    with structlog.testing.capture_logs() as events:
        answers = [
            await env.api.post("/api/v1/courses", content=ARRAYS, headers=bearer),
            await env.api.post("/api/v1/courses", content=inside("title", OBJECTS), headers=bearer),
            await env.api.patch(f"/api/v1/courses/{created.json()['id']}", content=inside("title"), headers=bearer),
            await env.api.patch("/api/v1/school", content=inside("name"), headers=bearer),
        ]
    for response in answers:
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_request"
        assert "deep" in response.json()["error_description"]
    no_crash_logged(events)
    unchanged = await env.api.get(f"/api/v1/courses/{created.json()['id']}", headers=bearer)
    assert unchanged.json()["title"] == "C"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


async def test_deep_token_header_is_invalid_token(jwt_env: ApiEnv) -> None:
    """A bearer token's JOSE header is JSON from outside too (read to pick the key). A token
    is at most 8192 characters: 3,000 deep is what fits, far past the recursion limit."""
    env = jwt_env
    token = f"{_b64(b'[' * 3000 + b']' * 3000)}.{_b64(b'{}')}.{_b64(b'sig')}"
    assert len(token) <= MAX_TOKEN
    with structlog.testing.capture_logs() as events:
        at_api = await env.api.get("/api/v1/school", headers=env.bearer(token))
        at_userinfo = await env.flow.client.get("/api/oauth/userinfo", headers=env.bearer(token))
    for response in (at_api, at_userinfo):
        assert response.status_code == 401, response.text
        assert response.json()["error"] == "invalid_token"
    no_crash_logged(events)


# -- Client ID Metadata Documents -----------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[HttpsServer, Path]]:
    with https_server(tmp_path) as running:
        yield running


@pytest.fixture
async def cimd_flow(authz_settings, site, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    _, ca = site
    settings = AuthzSettings(
        **{
            **msgspec.structs.asdict(authz_settings),
            "cimd_max_bytes": 64 * 1024,  # room for the deep document: its depth is what is refused
        }
    )
    async with serve(create_app(settings, clock=clock, document_web=site_web(ca))) as client:
        yield Flow(client, clean_db, redis_client)


async def test_deep_metadata_document_is_refused(cimd_flow: Flow, site) -> None:
    server, _ = site
    url = server.url("/deep.json")
    head = msgspec.json.encode({"client_id": url, "redirect_uris": [REDIRECT_URI]})
    server.replies["/deep.json"] = Reply(head[:-1] + b',"extra":' + ARRAYS + b"}")
    _, challenge = pkce_pair()
    params = cimd_flow.authorize_params({"client_id": url, "redirect_uris": [REDIRECT_URI]}, challenge)
    with structlog.testing.capture_logs() as events:
        start = await cimd_flow.start(params)
    assert start.status_code == 400 and "location" not in start.headers
    assert "could not be fetched or used" in start.text  # one page for every cause; the cause is logged
    assert any("deep" in str(e.get("detail", "")) for e in events if e["event"] == "request_refused")
    no_crash_logged(events)
    assert await cimd_flow.count("authz_clients") == 0


# -- strings that are not UTF-8 -------------------------------------------------------------------

NOT_UTF8 = b'{"client_name": "\xbb\xdc"}'
# A real refresh token's text: its first segment (the whole token) decodes as a JOSE
# header to a quote followed by bytes that are not UTF-8.
OPAQUE = "IrtQIEND3OSAUsIihalxdQA4ZXaJxo-3Tffa_kfWMIM"
HEADER_NOT_UTF8 = b'{"alg": "\xbb"}'


async def test_json_not_utf8_is_refused_like_any_bad_json(jwt_env: ApiEnv) -> None:
    env = jwt_env
    assert base64.urlsafe_b64decode(OPAQUE + "=")[:1] == b'"'
    rs = await env.flow.integration("Introspecting resource server")
    token = await env.token("courses:write courses:read")
    bearer = {**JSON, **env.bearer(token)}
    header_not_utf8 = ".".join((_b64(HEADER_NOT_UTF8), _b64(b"{}"), _b64(b"sig")))
    with structlog.testing.capture_logs() as events:
        introspected = [
            await env.flow.client.post(
                "/api/oauth/introspect",
                data={"token": value, "client_id": rs["client_id"], "client_secret": rs["client_secret"]},
            )
            for value in (OPAQUE, header_not_utf8)
        ]
        registered = await env.flow.client.post("/api/oauth/register", content=NOT_UTF8, headers=JSON)
        written = await env.api.post("/api/v1/courses", content=b'{"title": "\xbb", "slug": "c"}', headers=bearer)
        at_api = await env.api.get("/api/v1/school", headers=env.bearer(header_not_utf8))
        at_userinfo = await env.flow.client.get("/api/oauth/userinfo", headers=env.bearer(header_not_utf8))
    for response in introspected:
        assert response.status_code == 200 and response.json() == {"active": False}, response.text
    assert registered.status_code == 400 and registered.json()["error"] == "invalid_client_metadata"
    assert written.status_code == 400 and written.json()["error"] == "invalid_request"
    for response in (at_api, at_userinfo):
        assert response.status_code == 401 and response.json()["error"] == "invalid_token", response.text
    no_crash_logged(events)
    courses = await env.api.get("/api/v1/courses", headers=bearer)
    assert courses.json()["items"] == []
