"""Redirect URIs of native clients.

RFC 8252 §7.3: loopback redirects use `http` on a loopback IP literal; the server
must allow any port at request time. §8.3 discourages `localhost`, but the interface
accepts it (real clients register `http://localhost:<port>/callback`), so it is
treated as loopback too. RFC 6749 §3.1.2: the URI is absolute and has no fragment.
Administrator-made integrations may use fixed `https` callbacks (exact match).

Matching is a comparison of strings (RFC 9700 §4.1.3, RFC 8252 §7.3): the requested URI
is the registered string itself, or, for a loopback URI, the registered string with only
its port changed. Nothing is normalised first: a different case of scheme or host,
percent-encoding, a spelled-out default port, an empty port, a trailing dot or user-info
is a different URI and is refused.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "[::1]", "localhost"})
MAX_REDIRECT_URI_LENGTH = 2000


# A netloc of a loopback redirect: the host and an optional port, nothing else.
_LOOPBACK_NETLOC = re.compile(r"(?:127\.0\.0\.1|\[::1\]|localhost)(?::[0-9]{1,5})?", re.IGNORECASE)


# A loopback URI cut around its port: what precedes it (scheme and host, as spelled), the
# port's digits (none, or 1 to 65535 with no leading zero) and what follows (path, query).
_LOOPBACK_AROUND_PORT = re.compile(
    r"(?P<head>[A-Za-z]+://(?:127\.0\.0\.1|\[::1\]|(?i:localhost)))"
    r"(?::(?P<port>[1-9][0-9]{0,4}))?(?P<tail>[/?][^#]*)?",
    re.DOTALL,
)


def _split(uri: str) -> SplitResult | None:
    if not isinstance(uri, str) or not uri or len(uri) > MAX_REDIRECT_URI_LENGTH:
        return None
    # RFC 3986 §2: a URI is printable ASCII; anything else (controls, spaces,
    # Unicode whitespace) is refused rather than normalised.
    if any(not (0x21 <= ord(c) <= 0x7E) for c in uri):
        return None
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return None
    return parts


def is_loopback_redirect_uri(uri: str) -> bool:
    """True for `http://<loopback host>[:port][/path][?query]` with no fragment or user-info."""
    parts = _split(uri)
    if parts is None or "#" in uri:
        return False
    if parts.scheme != "http" or not _LOOPBACK_NETLOC.fullmatch(parts.netloc):
        return False
    port = parts.port
    return port is None or 0 < port <= 65535


def is_https_redirect_uri(uri: str) -> bool:
    """A fixed HTTPS callback, allowed only for integrations made by an administrator."""
    parts = _split(uri)
    if parts is None or "#" in uri or parts.scheme != "https" or "@" in parts.netloc:
        return False
    return bool(parts.hostname)


def redirect_uri_matches(requested: str, registered: str) -> bool:
    """Exact string match, except that a loopback URI's port may differ (RFC 8252 §7.3,
    RFC 9700 §4.1.3). Only the port's digits may differ: everything before and after
    them is compared as the registered string spells it."""
    if requested == registered:
        return True
    if not (is_loopback_redirect_uri(requested) and is_loopback_redirect_uri(registered)):
        return False
    a, b = _LOOPBACK_AROUND_PORT.fullmatch(requested), _LOOPBACK_AROUND_PORT.fullmatch(registered)
    if a is None or b is None or (a["port"] is not None and int(a["port"]) > 65535):
        return False
    return a["head"] == b["head"] and (a["tail"] or "") == (b["tail"] or "")


def find_redirect_uri(requested: str, registered: list[str]) -> bool:
    return any(redirect_uri_matches(requested, r) for r in registered)


def describe_redirect_host(uri: str) -> str:
    """What the consent page says about where the code goes."""
    if is_loopback_redirect_uri(uri):
        parts = _split(uri)
        port = parts.port if parts else None
        return f"an app on this computer (port {port})" if port else "an app on this computer"
    parts = _split(uri)
    return parts.hostname if parts and parts.hostname else uri
