"""URIs in the form two of them are compared in: RFC 3986 §6.2.2 (case,
percent-encoding, dot segments) and §6.2.3 (default port, empty path). DPoP compares a
proof's `htu` with the request's URI this way (RFC 9449 §4.3, check 9)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def comparable_uri(uri: str) -> str | None:
    """The URI without query and fragment, after the syntax-based (RFC 3986
    §6.2.2: case, percent-encoding, dot segments) and scheme-based (§6.2.3: default port,
    empty path) normalisations; None when it is not an absolute http(s) URI."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _DEFAULT_PORTS or not host or parts.username is not None or parts.password is not None:
        return None
    host = f"[{host}]" if ":" in host else host
    authority = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _remove_dot_segments(_PERCENT.sub(_percent_normal, parts.path)) or "/"
    return f"{scheme}://{authority}{path}"


def _percent_normal(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4."""
    segments = path.split("/")
    out: list[str] = []
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment in (".", ".."):
            if segment == ".." and len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(segment)
    return "/".join(out)
