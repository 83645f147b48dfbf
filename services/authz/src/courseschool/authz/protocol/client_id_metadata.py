"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the
Model Context Protocol authorization spec uses them): the `client_id` is an HTTPS URL
and the client's metadata is the JSON document served there.

Rules applied here (no I/O): the URL's form (§3: https, a path, no fragment, no
user-info, no dot segments); the document's `client_id` equals the URL exactly (§4.1);
no `client_secret` (§4.1: the client is public, authenticating with `none`); redirect
URIs are loopback (RFC 8252 §7.3) or HTTPS on the document's own host.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import msgspec

from .models import Client
from .redirect_uris import is_https_redirect_uri, is_loopback_redirect_uri
from .registration import GRANT_TYPES, ID_TOKEN_ALGS, MAX_NAME_LENGTH, MAX_REDIRECT_URIS

MAX_URL_LENGTH = 2000


class MetadataDocumentError(ValueError):
    """The URL or its document cannot identify a client; the message says why."""


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


class MetadataDocument(msgspec.Struct, kw_only=True):
    client_id: str
    redirect_uris: list[str]
    client_name: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    token_endpoint_auth_method: str = "none"
    grant_types: list[str] = msgspec.field(default_factory=lambda: ["authorization_code"])
    response_types: list[str] = msgspec.field(default_factory=lambda: ["code"])
    id_token_signed_response_alg: str = "RS256"


def client_from_document(url: str, raw: dict[str, Any], *, now: int) -> Client:
    host = check_url(url)
    if "client_secret" in raw or "client_secret_expires_at" in raw:
        raise MetadataDocumentError("a metadata document must not hold a client secret")
    try:
        doc = msgspec.convert(raw, MetadataDocument)
    except msgspec.ValidationError as exc:
        raise MetadataDocumentError(f"the metadata document is invalid: {exc}") from None
    if doc.client_id != url:
        raise MetadataDocumentError("the document's client_id is not the URL it was fetched from")
    if doc.token_endpoint_auth_method != "none":
        raise MetadataDocumentError("clients with metadata documents are public: token_endpoint_auth_method none")
    if not doc.redirect_uris or len(doc.redirect_uris) > MAX_REDIRECT_URIS:
        raise MetadataDocumentError(f"the document must list 1 to {MAX_REDIRECT_URIS} redirect_uris")
    for uri in doc.redirect_uris:
        same_host = is_https_redirect_uri(uri) and urlsplit(uri).hostname == host
        if not (is_loopback_redirect_uri(uri) or same_host):
            raise MetadataDocumentError(f"redirect URIs must be loopback or https on {host}")
    if any(g not in GRANT_TYPES for g in doc.grant_types) or "authorization_code" not in doc.grant_types:
        raise MetadataDocumentError("grant_types may only hold authorization_code and refresh_token")
    if doc.response_types != ["code"]:
        raise MetadataDocumentError('response_types must be ["code"]')
    if doc.id_token_signed_response_alg not in ID_TOKEN_ALGS:
        raise MetadataDocumentError("id_token_signed_response_alg must be RS256 or ES256")
    name = (doc.client_name or host)[:MAX_NAME_LENGTH]
    return Client(
        client_id=url, client_name=name, redirect_uris=doc.redirect_uris, token_endpoint_auth_method="none",
        grant_types=[g for g in GRANT_TYPES if g in doc.grant_types], response_types=["code"],
        application_type="native", scope=None, id_token_signed_response_alg=doc.id_token_signed_response_alg,
        secret_hash=None, is_integration=False, client_id_issued_at=now, verified_origin=host,
    )
