"""From a base URL to the authorization server's endpoints: the protected resource's
document first (RFC 9728 §3), then its authorization server's (RFC 8414 §3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .errors import DiscoveryError

PRM_PATH = "/.well-known/oauth-protected-resource"
ASM_PATH = "/.well-known/oauth-authorization-server"


@dataclass(frozen=True)
class Server:
    """What the client uses of the two documents."""

    base_url: str
    resource: str
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    revocation_endpoint: str | None = None
    userinfo_endpoint: str | None = None
    scopes_supported: tuple[str, ...] = ()
    cimd_supported: bool = False
    dpop_algs: tuple[str, ...] = ()
    iss_in_answers: bool = True  # RFC 9207: then an answer without `iss` is refused


def normalise(base_url: str) -> str:
    """The base URL as the store keys it: lower-case scheme and host, no trailing slash."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DiscoveryError(f"{base_url!r} is not an http(s) URL")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def well_known(issuer: str, suffix: str) -> str:
    """RFC 8414 §3.1 / RFC 9728 §3.1: the well-known segment goes between host and path."""
    parts = urlsplit(issuer)
    return f"{parts.scheme}://{parts.netloc}{suffix}{parts.path.rstrip('/')}"


def _get_json(http: httpx.Client, url: str) -> dict[str, Any] | None:
    try:
        response = http.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise DiscoveryError(f"cannot reach {url}: {exc}") from None
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise DiscoveryError(f"{url} answered HTTP {response.status_code}")
    try:
        document = response.json()
    except ValueError:
        raise DiscoveryError(f"{url} did not answer JSON") from None
    if not isinstance(document, dict):
        raise DiscoveryError(f"{url} did not answer a JSON object")
    return document


def discover(http: httpx.Client, base_url: str) -> Server:
    """RFC 9728 names the resource and its authorization server; RFC 8414 the endpoints.
    A base URL without the RFC 9728 document is taken as the issuer itself."""
    base_url = normalise(base_url)
    prm = _get_json(http, well_known(base_url, PRM_PATH)) or {}
    servers = prm.get("authorization_servers") or [base_url]
    issuer = str(servers[0])
    meta = _get_json(http, well_known(issuer, ASM_PATH))
    if meta is None:
        raise DiscoveryError(f"{base_url} publishes no authorization server metadata (RFC 8414)")
    if meta.get("issuer") != issuer:  # RFC 8414 §3.3
        raise DiscoveryError(f"the metadata's issuer {meta.get('issuer')!r} is not {issuer!r}")
    if "S256" not in meta.get("code_challenge_methods_supported", []):
        raise DiscoveryError(f"{issuer} does not offer PKCE S256")
    for needed in ("authorization_endpoint", "token_endpoint"):
        if not meta.get(needed):
            raise DiscoveryError(f"{issuer}'s metadata has no {needed}")
    return Server(
        base_url=base_url,
        resource=str(prm.get("resource") or base_url),
        issuer=issuer,
        authorization_endpoint=meta["authorization_endpoint"],
        token_endpoint=meta["token_endpoint"],
        registration_endpoint=meta.get("registration_endpoint"),
        revocation_endpoint=meta.get("revocation_endpoint"),
        userinfo_endpoint=meta.get("userinfo_endpoint"),
        scopes_supported=tuple(prm.get("scopes_supported") or meta.get("scopes_supported") or ()),
        cimd_supported=bool(meta.get("client_id_metadata_document_supported")),
        dpop_algs=tuple(meta.get("dpop_signing_alg_values_supported") or ()),
        iss_in_answers=bool(meta.get("authorization_response_iss_parameter_supported")),
    )
