"""A single-page app in real Chromium, with a real browser client library
(oidc-client-ts, pinned in tests/browser): served on a loopback origin
(`http://localhost:<port>`, not the platform's `http://127.0.0.1:<port>`), it registers
with fetch(), signs a person in through the pages, redeems its code, reads UserInfo,
calls the API, refreshes and revokes, every call cross-origin (CORS, common/cors.py).
The same calls from a non-loopback origin no client registered (a made-up host name
mapped to 127.0.0.1 by Chromium's host resolver rules) are refused by the browser: no
`Access-Control-Allow-Origin` comes back, except on the public documents."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ..support.deployment import REPO
from ..support.npm import npm_ci
from .conftest import CHROMIUM, CHROMIUM_ARGS, Platform

pytestmark = pytest.mark.browser

BROWSER_TOOLS = REPO / "tests" / "browser"
TIMEOUT_MS = 15_000
SCOPE = "openid profile email courses:read"
FOREIGN_HOST = "spa-elsewhere.test"  # resolved to 127.0.0.1 by the second browser only

# The app's one page (its start and its callback): the library, and how the app makes
# its UserManager (a public client with PKCE S256, its user kept in localStorage).
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Course app</title>
<script src="/oidc-client-ts.min.js"></script>
<script>
const AUTHORITY = %(authority)s;
window.manager = (clientId) => new oidc.UserManager({
  authority: AUTHORITY,
  client_id: clientId,
  redirect_uri: location.origin + "/callback",
  scope: %(scope)s,
  loadUserInfo: true,
  userStore: new oidc.WebStorageStateStore({ store: window.localStorage }),
});
</script></head><body><h1>Course app</h1></body></html>"""

REGISTER = """async (authority) => {
  const meta = await (await fetch(authority + "/.well-known/oauth-authorization-server")).json();
  const answer = await fetch(meta.registration_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "E2E single-page app",
      redirect_uris: [location.origin + "/callback"],
      token_endpoint_auth_method: "none",
    }),
  });
  return { status: answer.status, body: await answer.json() };
}"""

USER = """(user) => ({
  access_token: user.access_token, refresh_token: user.refresh_token, scope: user.scope,
  email: user.profile.email, sub: user.profile.sub,
})"""

# Each call as a single-page app makes it; "read" when the page may read the answer,
# else what the browser said.
CALLS = """async ([authority, clientId, accessToken, refreshToken]) => {
  const meta = await (await fetch(authority + "/.well-known/openid-configuration")).json();
  const bearer = { Authorization: "Bearer " + accessToken };
  const form = (fields) => ({ method: "POST", body: new URLSearchParams(fields) });
  const calls = {
    metadata: [authority + "/.well-known/oauth-authorization-server", {}],
    jwks: [meta.jwks_uri, {}],
    register: [meta.registration_endpoint, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [location.origin + "/callback"], token_endpoint_auth_method: "none" }),
    }],
    token: [meta.token_endpoint, form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId })],
    revoke: [meta.revocation_endpoint, form({ token: refreshToken, client_id: clientId })],
    userinfo: [meta.userinfo_endpoint, { headers: bearer }],
    api: [authority + "/api/v1/courses", { headers: bearer }],
    api_anonymous: [authority + "/api/v1/courses", {}],
  };
  const out = {};
  for (const [name, [url, init]] of Object.entries(calls)) {
    try {
      const answer = await fetch(url, init);
      out[name] = { read: true, status: answer.status };
    } catch (error) {
      out[name] = { read: false, error: String(error) };
    }
  }
  return out;
}"""


@dataclass(frozen=True)
class Site:
    port: int

    def origin(self, host: str = "localhost") -> str:
        return f"http://{host}:{self.port}"


@pytest.fixture(scope="module")
def oidc_client_ts() -> bytes:
    """oidc-client-ts's browser build, from tests/browser (`npm ci` there when missing)."""
    script = BROWSER_TOOLS / "node_modules" / "oidc-client-ts" / "dist" / "browser" / "oidc-client-ts.min.js"
    if not script.exists():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: this test needs oidc-client-ts (tests/browser/package.json)")
        npm_ci(BROWSER_TOOLS, script)
    return script.read_bytes()


@pytest.fixture
def site(platform: Platform, oidc_client_ts: bytes) -> Iterator[Site]:
    """The app's static files on a port of 127.0.0.1, whatever host name the browser
    used to reach it: the page and the library, nothing else."""
    page = (PAGE % {"authority": json.dumps(platform.base_url), "scope": json.dumps(SCOPE)}).encode()
    files = {"/": (page, "text/html"), "/callback": (page, "text/html")}
    files["/oidc-client-ts.min.js"] = (oidc_client_ts, "text/javascript")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = files.get(self.path.split("?", 1)[0])
            if found is None:
                self.send_error(404)
                return
            body, media_type = found
            self.send_response(200)
            self.send_header("Content-Type", f"{media_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="spa-site", daemon=True)
    thread.start()
    try:
        yield Site(port=httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
async def context(browser: Any) -> AsyncIterator[Any]:
    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        await ctx.close()


@pytest.fixture
async def foreign_context(browser: Any) -> AsyncIterator[Any]:
    """A browser of its own in which FOREIGN_HOST is 127.0.0.1: a real origin that is
    neither loopback nor any client's."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {FOREIGN_HOST} 127.0.0.1"]
    elsewhere = await browser.browser_type.launch(executable_path=str(CHROMIUM), headless=True, args=args)
    try:
        ctx = await elsewhere.new_context()
        ctx.set_default_timeout(TIMEOUT_MS)
        yield ctx
    finally:
        await elsewhere.close()


def _platform_answers(page: Any, platform: Platform) -> list[tuple[str, str, dict[str, str]]]:
    """Every answer the page got from the platform: method, path, header fields."""
    seen: list[tuple[str, str, dict[str, str]]] = []

    async def record(response: Any) -> None:
        if response.url.startswith(platform.base_url + "/"):
            path = response.url[len(platform.base_url) :].split("?", 1)[0]
            seen.append((response.request.method, path, await response.all_headers()))

    page.on("response", record)
    return seen


async def test_single_page_app_on_localhost_signs_in_calls_the_api_refreshes_and_revokes(
    platform: Platform, site: Site, context: Any, foreign_context: Any
) -> None:
    from playwright.async_api import expect

    origin = site.origin()
    page = await context.new_page()
    answers = _platform_answers(page, platform)
    await page.goto(origin + "/")

    # Dynamic registration (RFC 7591) from the page.
    registered = await page.evaluate(REGISTER, platform.base_url)
    assert registered["status"] == 201, registered
    client_id = registered["body"]["client_id"]
    assert registered["body"]["redirect_uris"] == [origin + "/callback"]

    # Sign-in through the pages: the library sends the browser to /oauth/authorize.
    await page.evaluate("(id) => { localStorage.setItem('client_id', id); manager(id).signinRedirect(); }", client_id)
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.get_by_label("Email").fill(platform.email)
    await page.get_by_label("Password").fill(platform.password)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("button", name="Allow").click()
    await page.wait_for_url(re.compile("^" + re.escape(origin + "/callback?")))

    # The code redeemed by the library (token endpoint), then UserInfo.
    user = await page.evaluate(f"async (id) => ({USER})(await manager(id).signinCallback())", client_id)
    assert user["access_token"] and user["refresh_token"], user
    assert user["scope"] == SCOPE and user["email"] == platform.email

    # The API, with the token; an error's challenge is readable (exposed).
    api = await page.evaluate(
        """async ([authority, token]) => {
          const ok = await fetch(authority + "/api/v1/courses", { headers: { Authorization: "Bearer " + token } });
          const bad = await fetch(authority + "/api/v1/courses", { headers: { Authorization: "Bearer nope" } });
          return { status: ok.status, items: (await ok.json()).items.length,
                   refused: bad.status, challenge: bad.headers.get("WWW-Authenticate") };
        }""",
        [platform.base_url, user["access_token"]],
    )
    assert api["status"] == 200 and api["items"] > 0, api
    assert api["refused"] == 401 and 'error="invalid_token"' in (api["challenge"] or ""), api

    # A credentialed request is never allowed: no cookie of ours crosses origins.
    credentialed = await page.evaluate(
        """async ([url, token]) => fetch(url, { credentials: "include", headers: { Authorization: "Bearer " + token } })
             .then(() => "read", (error) => "refused: " + error)""",
        [platform.base_url + "/api/oauth/userinfo", user["access_token"]],
    )
    assert credentialed.startswith("refused"), credentialed

    # Refresh with the refresh token (signinSilent uses it when the user holds one).
    refreshed = await page.evaluate(f"async (id) => ({USER})(await manager(id).signinSilent())", client_id)
    assert refreshed["access_token"] != user["access_token"]
    assert refreshed["refresh_token"] != user["refresh_token"] and refreshed["sub"] == user["sub"]

    # Revocation (RFC 7009) by the library; the refresh token then no longer works.
    await page.evaluate("async (id) => { await manager(id).revokeTokens(); }", client_id)
    after = await page.evaluate(
        """async ([authority, clientId, refreshToken]) => {
          const meta = await (await fetch(authority + "/.well-known/openid-configuration")).json();
          const answer = await fetch(meta.token_endpoint, { method: "POST", body: new URLSearchParams(
            { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }) });
          return { status: answer.status, body: await answer.json() };
        }""",
        [platform.base_url, client_id, refreshed["refresh_token"]],
    )
    assert after["status"] == 400 and after["body"]["error"] == "invalid_grant", after

    # Every cross-origin answer the app read carried the CORS fields it needed.
    cross = [(m, p, h) for m, p, h in answers if not p.startswith(("/oauth/", "/authorize"))]
    assert {p for _, p, _ in cross} >= {
        "/.well-known/openid-configuration",
        "/api/oauth/register",
        "/api/oauth/token",
        "/api/oauth/userinfo",
        "/api/oauth/revoke",
        "/api/v1/courses",
    }, cross
    for method, path, headers in cross:
        expected = "*" if path.startswith("/.well-known/") else origin
        assert headers.get("access-control-allow-origin") == expected, (method, path, headers)
        assert "access-control-allow-credentials" not in headers, (method, path)
    for method, path, headers in answers:  # the pages, /oauth/authorize included, stay same-origin
        if path.startswith(("/oauth/", "/authorize")):
            assert not [k for k in headers if k.startswith("access-control-")], (method, path, headers)

    # The same calls from a real origin that is neither loopback nor a client's.
    elsewhere = await foreign_context.new_page()
    network = await _network_answers(foreign_context, elsewhere, platform)
    await elsewhere.goto(site.origin(FOREIGN_HOST) + "/")
    results = await elsewhere.evaluate(
        CALLS, [platform.base_url, client_id, refreshed["access_token"], refreshed["refresh_token"]]
    )
    assert results["metadata"]["read"] and results["jwks"]["read"], results  # public documents: any origin
    refused = ["register", "token", "revoke", "userinfo", "api", "api_anonymous"]
    assert all(not results[name]["read"] for name in refused), results
    # Every call reached the platform, the simple ones as themselves, the others as
    # their preflight (the browser sent no more), and came back without it. The protocol
    # may report an answer after the page's fetch has already failed: waited for, bounded.
    expected = {
        ("OPTIONS", "/api/oauth/register"),
        ("POST", "/api/oauth/token"),
        ("POST", "/api/oauth/revoke"),
        ("OPTIONS", "/api/oauth/userinfo"),
        ("OPTIONS", "/api/v1/courses"),
        ("GET", "/api/v1/courses"),
    }
    for _ in range(100):
        reached = {(method, path) for method, path, _ in network()}
        if expected <= reached:
            break
        await asyncio.sleep(0.05)
    assert expected <= reached, network()
    for method, path, headers in network():
        if not path.startswith("/.well-known/") and path != "/api/oauth/jwks":
            assert "access-control-allow-origin" not in headers, (method, path, headers)
    assert ("GET", "/api/oauth/userinfo") not in reached  # its preflight failed: the token never left


async def _network_answers(
    context: Any, page: Any, platform: Platform
) -> Callable[[], list[tuple[str, str, dict[str, str]]]]:
    """Every answer the page's network stack got from the platform so far, as the DevTools
    protocol reports it (method, path, header fields in lower case): those the page
    was not allowed to read too, which Playwright's own events leave out. A request and
    its answer are matched when asked: the protocol may report the answer first."""
    cdp = await context.new_cdp_session(page)
    sent: dict[str, tuple[str, str]] = {}
    answers: list[tuple[str, dict[str, str]]] = []

    def request(params: dict[str, Any]) -> None:
        sent[params["requestId"]] = (params["request"]["method"], params["request"]["url"])

    def answer(params: dict[str, Any]) -> None:
        answers.append((params["requestId"], {k.lower(): v for k, v in params["headers"].items()}))

    def seen() -> list[tuple[str, str, dict[str, str]]]:
        out = []
        for request_id, headers in answers:
            method, url = sent.get(request_id, ("?", ""))
            if url.startswith(platform.base_url + "/"):
                out.append((method, url[len(platform.base_url) :].split("?", 1)[0], headers))
        return out

    cdp.on("Network.requestWillBeSent", request)
    cdp.on("Network.responseReceivedExtraInfo", answer)
    await cdp.send("Network.enable")
    return seen
