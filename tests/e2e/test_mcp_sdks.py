"""Agents built on the Model Context Protocol SDKs, unmodified and as their documentation
uses them, against the running platform (issue 36): the TypeScript SDK
(`@modelcontextprotocol/client`, pinned in tests/clients/package.json) and the Python SDK
(`mcp`, pinned in requirements.lock). Each does its own discovery (RFC 9728, then RFC
8414), dynamic registration, scope selection, PKCE and code exchange; the person's step
is played here, by a browser-like session that signs in when asked and submits the
consent form as a browser does (every box left ticked).

- TypeScript: `tests/clients/mcp_step_up.mjs` signs in with what the protected resource's
  `scopes_supported` names (read scopes only), writes, gets `403 insufficient_scope`, and
  the SDK's transport steps up through the consent page (the union of what it holds and
  what the challenge names); the retry succeeds. The apps page then shows one sign-in
  whose access grew, and the first grant's refresh token is refused.
- Python: the first sign-in, given no hint (a 401 naming no scope), asks for the
  protected resource's `scopes_supported`: read scopes only. Its step-up lives in its
  httpx2 auth flow, for any request: a write steps up the same way and is retried.

The API answers a call without a token anonymously (no 401), so neither SDK's flow
starts from a bare call: the TypeScript agent calls the SDK's `auth()` as its transports
do, the Python agent holds a token the server does not know (an earlier install's), which
the API answers with 401 `invalid_token`. Without node and npm the TypeScript test skips
and says so; `npm ci` runs in tests/clients when the SDK is missing from node_modules/."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from ..support.npm import npm_ci
from .conftest import CallbackServer, Platform

# pytest-xdist: one worker: `npm ci` runs in tests/clients/, a folder of the repository.
pytestmark = pytest.mark.xdist_group("npm-clients")
CLIENTS = Path(__file__).resolve().parents[1] / "clients"
STEP_TIMEOUT = 60.0
IDENTITY = ("openid", "profile", "email")


@pytest.fixture(scope="session")
def node() -> str:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm and node are not installed: the MCP TypeScript SDK test needs Node 20 (tests/clients)")
    npm_ci(CLIENTS, CLIENTS / "node_modules" / "@modelcontextprotocol" / "client" / "package.json")
    return node


def test_the_sdks_are_pinned_to_the_versions_the_issue_names() -> None:
    """Issue 36 is about the newest SDKs: the versions tested are pinned, exactly."""
    package = json.loads((CLIENTS / "package.json").read_text())["devDependencies"]
    lock = json.loads((CLIENTS / "package-lock.json").read_text())["packages"]
    assert package["@modelcontextprotocol/client"] == "2.4.0"
    assert lock["node_modules/@modelcontextprotocol/client"]["version"] == "2.4.0"
    pins = (Path(__file__).resolve().parents[2] / "requirements.lock").read_text().splitlines()
    assert "mcp==2.3.0" in pins


# -- the person at the browser ----------------------------------------------------------------


class _Form(HTMLParser):
    """What a browser would submit from the page's form posting to `action`: its hidden
    fields and the checkboxes that are ticked (the page's defaults, left as they are)."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self.boxes: list[tuple[str, str, bool]] = []  # name, value, ticked

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action
        elif tag == "input" and self.inside and a.get("name"):
            kind = a.get("type", "text")
            if kind == "checkbox":
                self.boxes.append((a["name"], a.get("value", "on"), "checked" in a))
                if "checked" in a:
                    self.fields.append((a["name"], a.get("value", "on")))
            elif kind == "hidden":
                self.fields.append((a["name"], a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


def _posted(fields: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Form fields as httpx posts them, each name with its values in order."""
    posted: dict[str, list[str]] = {}
    for name, value in fields:
        posted.setdefault(name, []).append(value)
    return posted


class Person:
    """One person at one browser (one cookie jar, redirects followed by hand): signs in
    when an app's request asks, approves on the consent page, reads their connected apps."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.client = httpx.AsyncClient(follow_redirects=False, timeout=15.0)
        self.consent_pages: list[str] = []
        self.sign_ins = 0

    async def __aenter__(self) -> Person:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()

    def _abs(self, location: str) -> str:
        return urljoin(self.platform.base_url + "/", location)

    async def approve(self, url: str) -> str:
        """Open the app's authorization URL, sign in if asked, allow what the consent page
        offers as it stands; the redirect back to the app (Location)."""
        start = await self.client.get(url)
        assert start.status_code == 303, start.text
        interaction = self._abs(start.headers["location"])
        assert urlsplit(interaction).path.startswith("/oauth/interaction/"), interaction
        page = await self.client.get(interaction)
        assert page.status_code == 200, page.text
        if 'name="password"' in page.text:
            self.sign_ins += 1
            login = _Form(f"{urlsplit(interaction).path}/login")
            login.feed(page.text)
            done = await self.client.post(
                f"{interaction}/login",
                data=_posted([*login.fields, ("email", self.platform.email), ("password", self.platform.password)]),
            )
            assert done.status_code == 303, done.text
            page = await self.client.get(interaction)
            assert page.status_code == 200, page.text
        assert 'value="approve"' in page.text, page.text[:2000]
        self.consent_pages.append(page.text)
        form = _Form(f"{urlsplit(interaction).path}/consent")
        form.feed(page.text)
        assert form.boxes and all(ticked for _, _, ticked in form.boxes), form.boxes
        decided = await self.client.post(
            f"{interaction}/consent", data=_posted([*form.fields, ("decision", "approve")])
        )
        assert decided.status_code == 303, decided.text
        return decided.headers["location"]

    async def land(self, location: str) -> None:
        """What the browser does with the redirect: load the app's loopback page."""
        assert location.startswith("http://127.0.0.1:"), location
        landed = await self.client.get(location)
        assert landed.status_code == 200 and "You can close this window" in landed.text, landed.text

    async def connected_apps(self) -> str:
        page = await self.client.get(self._abs("/oauth/apps"))
        assert page.status_code == 200, page.text
        return page.text


def app_card(apps_page: str, name: str) -> str:
    """The apps page's card of the app called `name` (one card per app)."""
    cards = re.findall(r'<li class="app" id="app-\d+">.*?</ul>\s*</li>', apps_page, re.S)
    mine = [card for card in cards if f'<bdi class="client">{name}</bdi>' in card]
    assert len(mine) == 1, f"{len(mine)} cards for {name!r} on the apps page"
    return mine[0]


def sign_ins_of(card: str) -> list[str]:
    return re.findall(r'<li class="sign-in" id="sign-in-([^"]+)">', card)


def access_line(card: str, title: str) -> str:
    """The card's words for one area (`title`) under "What it can use"."""
    found = re.findall(
        rf'<span class="scope-title">{re.escape(title)}</span> <span class="scope-detail">([^<]*)</span>', card
    )
    assert len(found) == 1, f"{title!r} in the card: {found}"
    return found[0]


# -- what the platform publishes ---------------------------------------------------------------


async def published_scopes(base_url: str) -> tuple[list[str], list[str]]:
    """The RFC 9728 document's `scopes_supported` and the RFC 8414 document's."""
    async with httpx.AsyncClient(timeout=15.0) as http:
        prm = await http.get(f"{base_url}/.well-known/oauth-protected-resource")
        asm = await http.get(f"{base_url}/.well-known/oauth-authorization-server")
    assert prm.status_code == 200 and asm.status_code == 200, (prm.text, asm.text)
    return prm.json()["scopes_supported"], asm.json()["scopes_supported"]


def read_scopes_only(prm_scopes: list[str], all_scopes: list[str]) -> set[str]:
    """What the protected resource must advertise for basic use: identity and every read."""
    minimal = {*IDENTITY, *(s for s in all_scopes if s.endswith(":read"))}
    assert set(prm_scopes) == minimal, f"the RFC 9728 scopes_supported is not minimal: {sorted(prm_scopes)}"
    assert any(s.endswith(":write") for s in all_scopes), "the RFC 8414 document lists every scope"
    return minimal


# -- the TypeScript SDK --------------------------------------------------------------------------


async def run_ts_agent(
    node: str, platform: Platform, callback_server: CallbackServer, person: Person, name: str
) -> dict[str, dict[str, Any]]:
    """Run the agent to its end, playing the person at each authorization; its steps by name.
    Before the step-up is approved, the apps page as it was then is kept (`apps_before`)."""
    script = await asyncio.create_subprocess_exec(
        node,
        "mcp_step_up.mjs",
        platform.base_url,
        callback_server.url,
        name,
        cwd=CLIENTS,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert script.stdin is not None and script.stdout is not None and script.stderr is not None
    steps: dict[str, dict[str, Any]] = {}
    authorizations: list[dict[str, Any]] = []
    try:
        while "done" not in steps:
            line = await asyncio.wait_for(script.stdout.readline(), STEP_TIMEOUT)
            if not line:
                problem = (await script.stderr.read()).decode(errors="replace")
                pytest.fail(f"the agent stopped after {list(steps)}:\n{problem[-4000:]}")
            step = json.loads(line)
            if step["step"] == "authorize":
                authorizations.append(step)
                if len(authorizations) > 2:  # the sign-in and the step-up, no more: the agent is not waiting
                    continue
                if len(authorizations) == 2:  # the step-up: what the person's apps page says before approving it
                    steps["apps_before"] = {"page": await person.connected_apps()}
                location = await person.approve(step["url"])
                await person.land(location)
                try:
                    script.stdin.write(location.encode() + b"\n")
                    await script.stdin.drain()
                except ConnectionResetError:
                    problem = (await script.stderr.read()).decode(errors="replace")
                    pytest.fail(f"the agent stopped after {list(steps)}:\n{problem[-4000:]}")
                continue
            steps[step["step"]] = step
        assert await asyncio.wait_for(script.wait(), STEP_TIMEOUT) == 0
    finally:
        if script.returncode is None:
            script.kill()
            await script.wait()
    steps["authorizations"] = {"urls": [a["url"] for a in authorizations]}
    return steps


def requests_of(step: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(r["method"], r["path"], r["status"]) for r in step["requests"]]


async def test_typescript_sdk_signs_in_with_reads_and_steps_up_for_a_write(
    node: str, platform: Platform, callback_server: CallbackServer
) -> None:
    prm_scopes, all_scopes = await published_scopes(platform.base_url)
    reads = read_scopes_only(prm_scopes, all_scopes)
    name = f"MCP TypeScript SDK agent {secrets.token_hex(3)}"  # its card on the apps page, apart from others'
    async with Person(platform) as person:
        steps = await run_ts_agent(node, platform, callback_server, person, name)

        # The first sign-in: RFC 9728 discovery, then RFC 8414, then registration, all the SDK's own.
        first = steps["first_redirect"]
        assert first["result"] == "REDIRECT"
        asked = requests_of(first)
        assert ("GET", "/.well-known/oauth-protected-resource", 200) in asked, asked
        assert ("GET", "/.well-known/oauth-authorization-server", 200) in asked, asked
        assert ("POST", "/api/oauth/register", 201) in asked, asked
        order = [path for _, path, status in asked if status < 300]
        assert (
            order.index("/.well-known/oauth-protected-resource")
            < order.index("/.well-known/oauth-authorization-server")
            < order.index("/api/oauth/register")
        ), asked
        # No hint: the SDK asks for the protected resource's scopes_supported, read scopes only.
        assert first["prm_scopes"] == prm_scopes
        assert first["asked"]["scope"].split() == prm_scopes
        assert first["asked"]["code_challenge_method"] == "S256" and first["asked"]["has_code_challenge"]
        assert first["asked"]["resource"] == platform.base_url
        signed_in = steps["signed_in"]
        granted = set(signed_in["scope"].split())
        assert granted <= reads and "courses:read" in granted, granted
        assert signed_in["token_type"].lower() == "bearer" and signed_in["refresh"] is True
        assert ("POST", "/api/oauth/token", 200) in requests_of(signed_in)
        assert steps["read"]["status"] == 200

        # The write: 403 insufficient_scope, and the SDK's transport asks for the union at once
        # (a new authorization, not a refresh, which could not widen the grant).
        redirect = steps["stepped_up_redirect"]
        assert redirect["thrown"] == "UnauthorizedError"
        assert requests_of(redirect)[0] == ("POST", "/api/v1/courses", 403), redirect
        assert not [r for r in requests_of(redirect) if r[1] == "/api/oauth/token"], redirect
        assert redirect["authorizations"] == 2
        wider = set(redirect["asked"]["scope"].split())
        assert wider == granted | {"courses:write"}, wider
        assert redirect["asked"]["resource"] == platform.base_url

        # The person, still signed in in the same browser, is asked only for what is new.
        assert person.sign_ins == 1, "the step-up asked the person to sign in again"
        step_up_page = person.consent_pages[1]
        new, _, allowed = step_up_page.partition("Allowed before")
        assert "New: it also asks to" in new and "courses:write" in new and "courses:read" not in new
        assert "courses:read" in allowed

        stepped_up = steps["stepped_up"]
        assert set(stepped_up["scope"].split()) == wider, f"the step-up granted {sorted(stepped_up['scope'].split())}"
        assert stepped_up["refresh"] is True and stepped_up["new_refresh"] is True

        # The retry: the same message through the same transport, now created.
        retried = steps["retried"]
        assert "error" not in retried and requests_of(retried) == [("POST", "/api/v1/courses", 201)], retried
        assert len(steps["authorizations"]["urls"]) == 2
        created = steps["created"]
        assert created["found"] is True and created["title"] == created["sent_title"]

        # The apps page: one sign-in of the agent before and after, its access grown.
        before = app_card(steps["apps_before"]["page"], name)
        after = app_card(await person.connected_apps(), name)
    assert len(sign_ins_of(before)) == 1, before
    assert len(sign_ins_of(after)) == 1, f"the step-up shows as a second sign-in:\n{after}"
    assert "Signed in once" in after and "<dt>Access grew</dt>" in after, after
    seen_before, seen_after = access_line(before, "Courses"), access_line(after, "Courses")
    assert seen_after.startswith(seen_before + "; ") and len(seen_after) > len(seen_before) + 2, (
        seen_before,
        seen_after,
    )

    # The first grant was replaced: its refresh token is refused.
    tokens = steps["tokens"]
    async with httpx.AsyncClient(timeout=15.0) as http:
        refused = await http.post(
            f"{platform.base_url}/api/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["first_refresh_token"],
                "client_id": tokens["client_id"],
            },
        )
    outcome = (refused.status_code, refused.json().get("error"))
    assert outcome == (400, "invalid_grant"), f"the first grant's refresh token still works: {outcome}"


# -- the Python SDK ------------------------------------------------------------------------------


class AgentStorage:
    """The SDK's TokenStorage, in memory; it starts with `tokens` (or none)."""

    def __init__(self, tokens: OAuthToken | None = None) -> None:
        self.tokens = tokens
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Recorder:
    """Every request the SDK's client sends and the status it got, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    async def __call__(self, response: httpx2.Response) -> None:
        self.seen.append((response.request.method, response.request.url.path, response.status_code))


@dataclass
class PythonAgent:
    """An agent on the Python SDK: its OAuthClientProvider on an httpx2 client, the
    authorization URLs it opened, and every request it sent."""

    http: httpx2.AsyncClient
    storage: AgentStorage
    authorization_urls: list[str]
    recorder: Recorder


@contextlib.asynccontextmanager
async def python_agent(
    platform: Platform, callback_server: CallbackServer, person: Person, name: str = "MCP Python SDK agent"
) -> AsyncIterator[PythonAgent]:
    authorization_urls: list[str] = []

    async def redirect_handler(url: str) -> None:  # the agent opens the browser here
        authorization_urls.append(url)
        await person.land(await person.approve(url))

    async def callback_handler() -> AuthorizationCodeResult:  # and its loopback page hears back
        query = await callback_server.wait()
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    # An earlier install's token, unknown to this server: the API answers it with 401.
    storage = AgentStorage(OAuthToken(access_token=secrets.token_urlsafe(32)))
    provider = OAuthClientProvider(
        server_url=f"{platform.base_url}/api/v1/students",
        client_metadata=OAuthClientMetadata(
            client_name=name,
            redirect_uris=[callback_server.url],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    recorder = Recorder()
    async with httpx2.AsyncClient(auth=provider, timeout=30.0, event_hooks={"response": [recorder]}) as http:
        yield PythonAgent(http, storage, authorization_urls, recorder)


async def test_python_sdk_first_sign_in_asks_for_read_scopes_only(
    platform: Platform, callback_server: CallbackServer
) -> None:
    prm_scopes, all_scopes = await published_scopes(platform.base_url)
    async with Person(platform) as person, python_agent(platform, callback_server, person) as agent:
        answer = await agent.http.get(f"{platform.base_url}/api/v1/students", params={"limit": 1})
    assert answer.status_code == 200, answer.text
    seen = agent.recorder.seen
    assert seen[0] == ("GET", "/api/v1/students", 401), seen
    paths = [path for _, path, status in seen if status < 300]
    assert (
        paths.index("/.well-known/oauth-protected-resource")
        < paths.index("/.well-known/oauth-authorization-server")
        < paths.index("/api/oauth/register")
        < paths.index("/api/oauth/token")
    ), seen

    # Given no hint (the 401 names no scope), the SDK asks for scopes_supported: reads only.
    assert len(agent.authorization_urls) == 1
    query = dict(httpx.URL(agent.authorization_urls[0]).params)
    assert query["scope"].split() == prm_scopes, query
    assert query["code_challenge_method"] == "S256" and query["code_challenge"]
    assert query["resource"] == platform.base_url
    reads = read_scopes_only(prm_scopes, all_scopes)
    assert agent.storage.tokens is not None and agent.storage.tokens.scope is not None
    granted = set(agent.storage.tokens.scope.split())
    assert "students:read" in granted and granted <= reads, granted
    assert person.sign_ins == 1


async def test_python_sdk_steps_up_for_a_write(platform: Platform, callback_server: CallbackServer) -> None:
    """The Python SDK's step-up is in its httpx2 auth flow, for any request: a write with
    the read token gets 403 insufficient_scope, the SDK asks for the union, the person
    (still signed in) approves, and the SDK retries the same request."""
    name = f"MCP Python SDK agent {secrets.token_hex(3)}"  # its card on the apps page, apart from others'
    async with Person(platform) as person, python_agent(platform, callback_server, person, name) as agent:
        listed = await agent.http.get(f"{platform.base_url}/api/v1/students", params={"limit": 1})
        assert listed.status_code == 200, listed.text
        assert agent.storage.tokens is not None
        first = agent.storage.tokens
        slug = f"python-step-up-{secrets.token_hex(6)}"
        mark = len(agent.recorder.seen)
        made = await agent.http.post(
            f"{platform.base_url}/api/v1/courses", json={"title": "Python step-up", "slug": slug}
        )
        apps = await person.connected_apps()
    assert made.status_code == 201 and made.json()["slug"] == slug, made.text
    seen = agent.recorder.seen[mark:]
    assert seen[0] == ("POST", "/api/v1/courses", 403) and seen[-1] == ("POST", "/api/v1/courses", 201), seen
    assert len(agent.authorization_urls) == 2 and person.sign_ins == 1
    asked = set(dict(httpx.URL(agent.authorization_urls[1]).params)["scope"].split())
    assert first.scope is not None and asked == set(first.scope.split()) | {"courses:write"}, asked
    assert agent.storage.tokens.scope is not None and "courses:write" in agent.storage.tokens.scope.split()
    card = app_card(apps, name)
    assert len(sign_ins_of(card)) == 1 and "<dt>Access grew</dt>" in card, card
    async with httpx.AsyncClient(timeout=15.0) as http:
        refused = await http.post(
            f"{platform.base_url}/api/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": first.refresh_token, "client_id": _client_id(agent)},
        )
    outcome = (refused.status_code, refused.json().get("error"))
    assert outcome == (400, "invalid_grant"), f"the first grant's refresh token still works: {outcome}"


def _client_id(agent: PythonAgent) -> str:
    assert agent.storage.client_info is not None
    return agent.storage.client_info.client_id
