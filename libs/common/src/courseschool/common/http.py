"""HTTP rules that need no web framework: entity tags and their conditional match."""

from __future__ import annotations

import hashlib


def etag_of(body: bytes) -> str:
    """A strong entity tag (RFC 9110 §8.8.3): equal bodies give equal tags, on every replica."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def none_match(header: bytes, etag: bytes) -> bool:
    """RFC 9110 §13.1.2: If-None-Match matches when one of its listed tags equals ours by
    weak comparison (W/"x" matches "x"), or when it is "*"."""
    tags = {tag.strip().removeprefix(b"W/") for tag in header.split(b",")}
    return etag in tags or b"*" in tags
