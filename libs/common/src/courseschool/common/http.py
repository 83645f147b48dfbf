"""HTTP rules that need no web framework: entity tags and their conditional match, and
a document held as it is sent."""

from __future__ import annotations

import hashlib

import msgspec


class Held(msgspec.Struct, frozen=True):
    """A public document as it is sent: its bytes, entity tag and media type."""

    body: bytes
    etag: str
    media_type: str = "application/json"


def held(body: bytes, media_type: str = "application/json") -> Held:
    return Held(body, etag_of(body), media_type)


def etag_of(body: bytes) -> str:
    """A strong entity tag (RFC 9110 §8.8.3): equal bodies give equal tags, on every replica."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def none_match(header: bytes, etag: bytes) -> bool:
    """RFC 9110 §13.1.2: If-None-Match matches when one of its listed tags equals ours by
    weak comparison (W/"x" matches "x"), or when it is "*"."""
    tags = {tag.strip().removeprefix(b"W/") for tag in header.split(b",")}
    return etag in tags or b"*" in tags
