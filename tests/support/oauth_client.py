"""Helpers shared by the end-to-end tests: everything goes over HTTP to the running platform."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
from joserfc import jwt
from joserfc.jwk import KeySet

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
SCOPE = "openid profile email courses:read"


def s256(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636 §4.2), computed here, not by the server's code."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def pkce_pair() -> tuple[str, str]:
    """A fresh PKCE code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    return verifier, s256(verifier)


def query_of(url: str) -> dict[str, str]:
    """The query parameters of a URL (a redirect's Location), one value each; blank values kept."""
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def strip_query(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def authorization_request(
    meta: dict[str, Any], reg: dict[str, Any], redirect_uri: str, *, scope: str = SCOPE
) -> dict[str, str]:
    """A PKCE authorization request for a browser to open: its URL, the verifier, and its parameters."""
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": reg["client_id"],
        "redirect_uri": redirect_uri,
        "scope": scope,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": secrets.token_urlsafe(12),
        "nonce": secrets.token_urlsafe(12),
    }
    return {"url": meta["authorization_endpoint"] + "?" + urlencode(params), "verifier": verifier, **params}


async def discover(http: httpx.AsyncClient, base_url: str) -> dict[str, Any]:
    response = await http.get(f"{base_url}/.well-known/oauth-authorization-server")
    assert response.status_code == 200, response.text
    meta = response.json()
    assert meta["issuer"] == base_url
    assert meta["registration_endpoint"].startswith(base_url + "/")
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    return meta


async def register(http: httpx.AsyncClient, meta: dict[str, Any], redirect_uri: str, **extra: Any) -> dict[str, Any]:
    body = {
        "client_name": "E2E Test CLI",
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "none",
        **extra,
    }
    response = await http.post(meta["registration_endpoint"], json=body)
    assert response.status_code == 201, response.text
    reg = response.json()
    assert reg["client_id"]
    assert reg["redirect_uris"] == [redirect_uri]
    assert reg["token_endpoint_auth_method"] == body["token_endpoint_auth_method"]
    return reg


async def exchange_code(
    http: httpx.AsyncClient, meta: dict[str, Any], reg: dict[str, Any], request: dict[str, str], code: str
) -> httpx.Response:
    """The public client's code exchange for the `request` of `authorization_request`."""
    return await http.post(
        meta["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": request["redirect_uri"],
            "client_id": reg["client_id"],
            "code_verifier": request["verifier"],
        },
    )


def at_hash(access_token: str) -> str:
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode()


async def verify_id_token(
    http: httpx.AsyncClient,
    meta: dict[str, Any],
    id_token: str,
    *,
    client_id: str,
    nonce: str | None,
    access_token: str,
) -> dict[str, Any]:
    """Verify signature and claims the way a relying party must (OIDC Core §3.1.3.7)."""
    response = await http.get(meta["jwks_uri"])
    assert response.status_code == 200, response.text
    keys = KeySet.import_key_set(response.json())
    token = jwt.decode(id_token, keys, algorithms=["RS256"])
    assert token.header["alg"] == "RS256"
    assert token.header.get("kid"), "the ID token names no key"
    options: dict[str, Any] = {
        "iss": {"essential": True, "value": meta["issuer"]},
        "aud": {"essential": True, "value": client_id},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    if nonce is not None:
        options["nonce"] = {"essential": True, "value": nonce}
    jwt.JWTClaimsRegistry(leeway=30, **options).validate(token.claims)
    claims = dict(token.claims)
    if nonce is None:
        assert "nonce" not in claims
    assert claims["aud"] == client_id or claims["aud"] == [client_id]
    assert claims["at_hash"] == at_hash(access_token)
    return claims


class Human:
    """A person at a browser, played with a cookie jar and manual redirects."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.client = httpx.AsyncClient(follow_redirects=False, timeout=15.0)

    async def __aenter__(self) -> Human:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()

    def _abs(self, location: str) -> str:
        return urljoin(self.base_url + "/", location)

    @staticmethod
    def _csrf(page: httpx.Response) -> str:
        match = CSRF.search(page.text)
        assert match, f"no csrf field on the page:\n{page.text[:2000]}"
        return match.group(1)

    @staticmethod
    def _assert_page_headers(page: httpx.Response) -> None:
        assert page.headers["content-type"].startswith("text/html")
        assert "no-store" in page.headers.get("cache-control", "")
        assert page.headers.get("x-frame-options") == "DENY"
        assert "frame-ancestors 'none'" in page.headers.get("content-security-policy", "")

    async def authorize(self, url: str, *, email: str, password: str, decision: str = "approve") -> str:
        """Walk authorize -> login -> consent; return the final redirect Location."""
        start = await self.client.get(url)
        assert start.status_code == 303, start.text
        interaction = self._abs(start.headers["location"])
        assert urlsplit(interaction).path.startswith("/oauth/interaction/"), interaction
        binding = [c for c in self.client.cookies.jar if c.name == "cs_interaction"]
        assert binding and binding[-1].path == urlsplit(interaction).path, "binding cookie missing or not path-scoped"

        login = await self.client.get(interaction)
        assert login.status_code == 200, login.text
        self._assert_page_headers(login)
        assert 'name="password"' in login.text and 'name="email"' in login.text
        done = await self.client.post(
            f"{interaction}/login", data={"csrf": self._csrf(login), "email": email, "password": password}
        )
        assert done.status_code == 303, done.text
        assert self._abs(done.headers["location"]) == interaction

        consent = await self.client.get(interaction)
        assert consent.status_code == 200, consent.text
        self._assert_page_headers(consent)
        assert 'name="password"' not in consent.text, "still on the login page after signing in"
        assert 'value="approve"' in consent.text and 'value="deny"' in consent.text
        final = await self.client.post(
            f"{interaction}/consent", data={"csrf": self._csrf(consent), "decision": decision}
        )
        assert final.status_code == 303, final.text
        return final.headers["location"]

    async def sign_in(self, *, email: str, password: str, next_page: str = "/oauth/apps") -> str:
        """Sign in on the account pages' own sign-in page (no app asking), as a person who
        opens `next_page` does; the session cookie stays in this browser. Its value."""
        form = await self.client.get(self._abs(f"/oauth/signin?{urlencode({'next': next_page})}"))
        assert form.status_code == 200, form.text
        done = await self.client.post(
            self._abs("/oauth/signin"),
            data={"csrf": self._csrf(form), "email": email, "password": password, "next": next_page},
        )
        assert done.status_code == 303 and done.headers["location"] == next_page, done.text
        session = [c.value for c in self.client.cookies.jar if c.name.endswith("cs_session")]
        assert session, "no session cookie after signing in"
        return session[-1]

    async def follow_to_callback(self, location: str) -> httpx.Response:
        """What the browser does with the final redirect: load the app's loopback page."""
        response = await self.client.get(location)
        assert response.status_code == 200, response.text
        assert "You can close this window" in response.text
        return response


CALLBACK = "http://127.0.0.1:9/callback"  # never called: the flow reads the redirect itself


async def code_flow(
    base_url: str, email: str, password: str, scope: str, **metadata: object
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The whole code flow as a user and a client go through it: registration (with
    `metadata`), PKCE S256, sign-in and consent through the pages, the exchange (with the
    client's secret when it has one). (registration, token response)."""
    async with httpx.AsyncClient(timeout=30) as http:
        reg = (await http.post(f"{base_url}/api/oauth/register", json={"redirect_uris": [CALLBACK], **metadata})).json()
        verifier, challenge = pkce_pair()
        url = f"{base_url}/oauth/authorize?" + urlencode(
            {
                "response_type": "code",
                "client_id": reg["client_id"],
                "redirect_uri": CALLBACK,
                "scope": scope,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            }
        )
        async with Human(base_url) as human:
            code = query_of(await human.authorize(url, email=email, password=password))["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "client_id": reg["client_id"],
            "code_verifier": verifier,
        }
        if "client_secret" in reg:
            form["client_secret"] = reg["client_secret"]
        answer = await http.post(f"{base_url}/api/oauth/token", data=form)
        assert answer.status_code == 200, answer.text
    return reg, answer.json()


async def owner_token(base_url: str, email: str, password: str, scope: str | None = None) -> str:
    """An access token of the demo owner, by the whole code flow; every scope the
    metadata lists unless `scope` says."""
    if scope is None:
        async with httpx.AsyncClient(timeout=10) as http:
            meta = (await http.get(f"{base_url}/.well-known/oauth-authorization-server")).json()
        scope = " ".join(meta["scopes_supported"])
    _, tokens = await code_flow(base_url, email, password, scope)
    return tokens["access_token"]
