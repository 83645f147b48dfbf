"""`/auth.md`: the walkthrough is rendered with the real base URL, leaves no template
marker behind, and its generated tables cover every scope, area and endpoint; the
discovery app serves it as cacheable Markdown."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest

from courseschool.authz.metadata import authorization_server_metadata
from courseschool.authz.settings import AuthzSettings
from courseschool.common.asgi import AppLifespan
from courseschool.common.scopes import ALL_SCOPE_NAMES, ROLE_CAPS
from courseschool.common.settings import load_settings
from courseschool.discovery.app import create_app
from courseschool.discovery.settings import DiscoverySettings
from courseschool.discovery.walkthrough import render_walkthrough
from courseschool.resource_api.areas.registry import AREA_SPECS

BASE_URL = "https://school.example.test:8443"


@pytest.fixture(scope="module")
def doc() -> str:
    return render_walkthrough(BASE_URL).decode("utf-8")


def section(doc: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
    assert match, f"no section {heading!r}"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables in `text`, as lists of cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|( --- \|)+", line):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_the_real_base_url_is_filled_in_and_no_marker_is_left(doc: str) -> None:
    assert f'BASE_URL="{BASE_URL}"' in doc
    assert doc.count(BASE_URL) > 10
    assert "127.0.0.1:8000" not in doc  # the embedded default is not baked in
    assert "{{" not in doc and "}}" not in doc and "{%" not in doc
    assert "{base_url}" not in doc and "{docs_url}" not in doc
    assert "ask the school's administrator for a registered integration" in " ".join(doc.split())


def test_every_scope_of_the_registry_is_in_the_scope_table(doc: str) -> None:
    cells = " ".join(row[0] for row in table_rows(section(doc, "Scopes")))
    listed = re.findall(r"`([a-z_]+(?::[a-z]+)?)`", cells)
    assert sorted(listed) == sorted(ALL_SCOPE_NAMES)
    for role, cap in ROLE_CAPS.items():
        assert f"- **{role}**:" in doc
        if cap == frozenset(ALL_SCOPE_NAMES):
            assert f"- **{role}**: every scope" in doc


def test_every_area_path_is_in_the_area_table(doc: str) -> None:
    rows = {row[0].strip("`"): row for row in table_rows(section(doc, "API areas"))[1:]}
    assert set(rows) == {f"/api/v1/{spec.path}" for spec in AREA_SPECS}
    for spec in AREA_SPECS:
        _path, read, write, anonymous = rows[f"/api/v1/{spec.path}"]
        assert (f"`{spec.read_scope}`" == read) is spec.readable
        assert (f"`{spec.write_scope}`" == write) is spec.writable
        assert anonymous.startswith("yes") is spec.public


def test_every_endpoint_of_the_metadata_is_named(doc: str) -> None:
    meta = authorization_server_metadata(load_settings(AuthzSettings, environ={}, base_url=BASE_URL))
    urls = [v for k, v in meta.items() if k.endswith("_endpoint") or k in ("jwks_uri", "service_documentation")]
    assert len(urls) >= 8
    for url in urls:
        assert url in doc, url
        assert urlsplit(url).path in doc
    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource",
        "/openapi.json",
    ):
        assert f"{BASE_URL}{path}" in doc


def test_the_shell_steps_and_the_person_step(doc: str) -> None:
    blocks = re.findall(r"^```sh\n(.*?)^```$", doc, re.M | re.S)
    assert len(blocks) >= 7
    script = "\n".join(blocks)
    for name in ("CLIENT_ID", "CODE_VERIFIER", "CODE_CHALLENGE", "CODE", "ACCESS_TOKEN", "REFRESH_TOKEN"):
        assert re.search(rf"^{name}=", script, re.M), name
    assert "jq" not in script
    assert "?access_token=" not in script and "Authorization: Bearer $ACCESS_TOKEN" in script
    assert "code_challenge_method S256" in script
    # The person's step is prose: no block opens the browser or signs in.
    assert "## 4. Sign in and approve in the browser" in doc
    assert "password" not in script.lower()


async def test_the_discovery_app_serves_it_once_rendered_and_cacheable() -> None:
    settings = load_settings(DiscoverySettings, environ={}, base_url=BASE_URL)
    app = create_app(settings, upstreams={})
    async with AppLifespan(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as http:
            first = await http.get("/auth.md")
            assert first.status_code == 200
            assert first.headers["content-type"] == "text/markdown; charset=utf-8"
            assert first.headers["cache-control"] == "public, max-age=300"
            etag = first.headers["etag"]
            assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
            assert first.content == render_walkthrough(BASE_URL)
            again = await http.get("/auth.md")
            assert again.headers["etag"] == etag and again.content == first.content
            cached = await http.get("/auth.md", headers={"If-None-Match": etag})
            assert cached.status_code == 304 and cached.content == b""
            assert cached.headers["etag"] == etag


def test_the_limits_it_states_are_the_servers_defaults(doc: str) -> None:
    """The numbers a newcomer reads are the production defaults of the settings."""
    defaults = AuthzSettings(key_encryption_key="x")
    per = {"register": defaults.rate("rate_register_per_ip"), "token": defaults.rate("rate_token_per_ip")}
    assert per["register"].window == 3600 and f"{per['register'].limit} registrations an hour" in doc
    assert per["token"].window == 60 and f"{per['token'].limit} token-endpoint calls a" in doc
    client, authorize = defaults.rate("rate_token_per_client"), defaults.rate("rate_authorize_per_ip")
    assert f"{client.limit} a minute per client" in doc and client.window == 60
    assert f"{authorize.limit} authorization requests a" in doc and authorize.window == 60
    login = defaults.rate("rate_login_per_ip")
    assert f"{login.limit} sign-in\nattempts in {login.window // 60} minutes" in doc


def test_it_names_both_secret_methods_where_it_introduces_clients(doc: str) -> None:
    clients = next(line for line in doc.split("\n- ") if line.startswith("Clients:"))
    assert "client_secret_post" in clients and "client_secret_basic" in clients


def test_every_step_with_a_secret_names_both_methods(doc: str) -> None:
    """Revocation too: a client registered for HTTP Basic sends its secret that way."""
    for heading in ("## 6. Exchange the code for tokens", "## 10. Revoke when done"):
        section = doc.split(heading, 1)[1].split("\n## ", 1)[0]
        assert "client_secret" in section and "HTTP Basic" in section, heading
