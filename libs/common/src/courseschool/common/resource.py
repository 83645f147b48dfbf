"""Resource indicators, RFC 8707 §2.

A resource is an absolute URI without fragment. It is canonicalised the same way
everywhere: lower-case scheme and host, no default port, no trailing slash, so that
a value given at the authorization endpoint, the token endpoint and in `aud` compare
byte for byte.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_resource(value: str) -> str | None:
    """The canonical form of `value`, or None when it is not a valid resource URI."""
    if not value or any(not (0x21 <= ord(c) <= 0x7E) for c in value):
        return None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.fragment or "#" in value:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))
