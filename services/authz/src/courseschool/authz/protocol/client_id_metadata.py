"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the
Model Context Protocol authorization spec uses them): the `client_id` is an HTTPS URL
and the client's metadata is the JSON document served there.

Rules applied here (no I/O): the URL's form (§3: https, a path, no fragment, no
user-info, no dot segments); the addresses a document may be fetched from (public
ones only: the draft's "Server Side Request Forgery (SSRF) Attacks" considerations,
RFC 6890's special-use addresses); the document's `client_id` equals the
URL exactly (§4.1); no `client_secret` (§4.1: the client is public, authenticating
with `none`); redirect URIs follow the registration rule, loopback (RFC 8252 §7.3),
and HTTPS on the document's own host only when an administrator marked that host a
trusted domain (otherwise error redirects would go, unasked, wherever a document says).

Read liberally, used strictly: one document serves every authorization server its
client talks to (VS Code's lists a loopback and an HTTPS web redirect, and the device
grant beside the code grant). What this server would not accept is ignored, never
used and never shown: redirect URIs outside the rule above, grant types it does not
offer, scopes it does not know. A request naming an ignored redirect URI finds no
such redirect URI and gets the error page, never a redirect. Only a document left
with nothing usable is refused: no acceptable redirect URI, or no code grant.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import msgspec

from courseschool.common.errors import fit_description
from courseschool.common.scopes import format_scope, requested_scope, unknown_scopes

from .client_names import MAX_NAME_LENGTH, name_problem
from .models import Client
from .redirect_uris import is_https_redirect_uri, is_loopback_redirect_uri
from .registration import GRANT_TYPES, ID_TOKEN_ALGS, LINK_FIELDS, MAX_REDIRECT_URIS, link_problem

MAX_URL_LENGTH = 2000
# What the person and the client are told, whatever the cause (the cause goes to the
# log): telling a timeout, a refused connection and an HTTP status apart would make
# the server a port scanner of other hosts.
UNUSABLE = "the application's client metadata document could not be fetched or used"


class MetadataDocumentError(ValueError):
    """The URL or its document cannot identify a client; the message says why (for the
    log). `advice`, where set, is what the person at the error page may be told: only
    about the public document's content, never about the fetch (see UNUSABLE)."""

    def __init__(self, why: str, *, advice: str | None = None) -> None:
        super().__init__(why)
        self.advice = advice


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith("https://")


def check_url(url: str) -> str:
    """§3: the host the document lives on, if the URL may be a client_id."""
    if len(url) > MAX_URL_LENGTH or any(not (0x21 <= ord(c) <= 0x7E) for c in url):
        raise MetadataDocumentError("the client_id URL is too long or holds characters a URL cannot")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise MetadataDocumentError("the client_id URL is malformed") from None
    if parts.scheme != "https" or not parts.hostname:
        raise MetadataDocumentError("the client_id URL must be https with a host")
    if "#" in url or parts.username is not None or parts.password is not None:
        raise MetadataDocumentError("the client_id URL must not hold a fragment or user-info")
    segments = parts.path.split("/")
    if not parts.path or parts.path == "/" or "." in segments or ".." in segments:
        raise MetadataDocumentError("the client_id URL needs a path without dot segments")
    return parts.hostname


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: the NAT64 well-known
# prefix (RFC 6052 §2.1) and the deprecated IPv4-compatible form (RFC 4291 §2.5.5.1).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
# RFC 8215: a local-use NAT64 prefix translates to whatever the local network chooses.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches through: IPv4-mapped (RFC 4291
    §2.5.5.2), 6to4 (RFC 3056), Teredo's server and client (RFC 4380 §4), NAT64 and
    IPv4-compatible. Empty for a plain IPv6 address."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    if ip in _NAT64 or ip in _IPV4_COMPATIBLE:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return []


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not (ip.is_multicast or ip.is_reserved)


def is_public_address(address: str) -> bool:
    """A document is fetched only from a public address (SSRF). One that carries an
    IPv4 address is as public as that address is (and every address it carries)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return _public(ip)
    if ip in _LOCAL_NAT64:
        return False
    embedded = _embedded_ipv4(ip)
    if embedded:
        return all(_public(v4) for v4 in embedded)
    return _public(ip)


class MetadataDocument(msgspec.Struct, kw_only=True):
    client_id: str
    redirect_uris: list[str]
    client_name: str | None = None
    client_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None
    logo_uri: str | None = None
    token_endpoint_auth_method: str = "none"
    grant_types: list[str] = msgspec.field(default_factory=lambda: ["authorization_code"])
    response_types: list[str] = msgspec.field(default_factory=lambda: ["code"])
    id_token_signed_response_alg: str = "RS256"
    scope: str | None = None


def usable_redirect_uris(uris: list[str], *, host: str, trusted_host: bool) -> list[str]:
    """The document's redirect URIs this server accepts, in its order: loopback, or https
    on the document's own host once an administrator trusts it. The rest are ignored."""
    return [
        uri
        for uri in uris
        if is_loopback_redirect_uri(uri)
        or (trusted_host and is_https_redirect_uri(uri) and urlsplit(uri).hostname == host)
    ]


def client_from_document(url: str, raw: dict[str, Any], *, now: int, trusted_host: bool) -> Client:
    """The client a document describes; `trusted_host`: an administrator trusts the
    document's host, so it may list https callbacks on itself."""
    host = check_url(url)
    if "client_secret" in raw or "client_secret_expires_at" in raw:
        raise MetadataDocumentError("a metadata document must not hold a client secret")
    try:
        doc = msgspec.convert(raw, MetadataDocument)
    except msgspec.ValidationError as exc:
        raise MetadataDocumentError(f"the metadata document is invalid: {fit_description(str(exc))}") from None
    if doc.client_id != url:
        raise MetadataDocumentError("the document's client_id is not the URL it was fetched from")
    if doc.token_endpoint_auth_method != "none":
        raise MetadataDocumentError("clients with metadata documents are public: token_endpoint_auth_method none")
    if not doc.redirect_uris or len(doc.redirect_uris) > MAX_REDIRECT_URIS:
        raise MetadataDocumentError(f"the document must list 1 to {MAX_REDIRECT_URIS} redirect_uris")
    redirect_uris = usable_redirect_uris(doc.redirect_uris, host=host, trusted_host=trusted_host)
    if not redirect_uris:
        raise MetadataDocumentError(
            "none of the document's redirect URIs can be used here: they must be loopback "
            f"(or https on {host} once an administrator trusts {host})",
            advice=f"The app's document ({host}) lists no address Course School may send you back to: only an "
            "address on your own computer (http://127.0.0.1 or localhost) is accepted, or an https one on the "
            "app's own site once your school's administrator trusts that site. The app's developer needs to add one.",
        )
    if "authorization_code" not in doc.grant_types:
        raise MetadataDocumentError("the document does not list the authorization_code grant, the one offered here")
    if "code" not in doc.response_types:
        raise MetadataDocumentError('the document\'s response_types must include "code"')
    if doc.id_token_signed_response_alg not in ID_TOKEN_ALGS:
        raise MetadataDocumentError("id_token_signed_response_alg must be RS256 or ES256")
    problem = name_problem(doc.client_name[:MAX_NAME_LENGTH]) if doc.client_name else None
    if problem:
        raise MetadataDocumentError(f"the document's {fit_description(problem)}")
    for field in LINK_FIELDS:
        problem = link_problem(getattr(doc, field))
        if problem:
            raise MetadataDocumentError(f"the document's {field} {fit_description(problem)}")
    name = (doc.client_name or host)[:MAX_NAME_LENGTH]
    known = [n for n in requested_scope(doc.scope or "") if not unknown_scopes([n])]
    return Client(
        client_id=url,
        client_name=name,
        redirect_uris=redirect_uris,
        token_endpoint_auth_method="none",
        grant_types=[g for g in GRANT_TYPES if g in doc.grant_types],
        response_types=["code"],
        application_type="native",
        scope=format_scope(known) or None,  # a default (RFC 6749 §3.3), never a ceiling
        id_token_signed_response_alg=doc.id_token_signed_response_alg,
        secret_hash=None,
        is_integration=False,
        client_id_issued_at=now,
        verified_origin=host,
        client_uri=doc.client_uri,
        policy_uri=doc.policy_uri,
        tos_uri=doc.tos_uri,
    )
