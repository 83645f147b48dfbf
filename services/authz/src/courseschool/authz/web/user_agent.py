"""A User-Agent header (RFC 9110 §10.1.5) in the few words a person recognises their
device by: "Firefox on Linux", "Safari on iPhone", "curl". The connected-apps page names
each sign-in by it; only this short form is stored, never the header.

Browsers copy each other's tokens (every Chromium browser says `Chrome/` and `Safari/`,
an iPhone says `like Mac OS X`), so the more specific tokens are looked for first. What
is returned is one of our fixed names, or, for a client that is no browser, its first
product name reduced to letters, digits and `._-` (nothing a client sends reaches a page
or a terminal as it was sent). None when the header says nothing we can name.
"""

from __future__ import annotations

import re

# (token in the header, the browser's name): the first that matches wins.
_BROWSERS = (
    ("Edg/", "Edge"),
    ("EdgA/", "Edge"),
    ("EdgiOS/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Vivaldi/", "Vivaldi"),
    ("FxiOS/", "Firefox"),
    ("Firefox/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
)
# (token, the system's name), in the same way: phones before the desktops they imitate.
_SYSTEMS = (
    ("iPhone", "iPhone"),
    ("iPad", "iPad"),
    ("Android", "Android"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Macintosh", "macOS"),
    ("Mac OS X", "macOS"),
    ("Linux", "Linux"),
    ("X11", "Linux"),
    ("FreeBSD", "FreeBSD"),
)
_PRODUCT = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,31}")
_MAX_HEADER = 1024  # a longer header is read this far


def short_user_agent(header: str | None) -> str | None:
    """ "Firefox on Linux" for a User-Agent header; None for none or a header we cannot name."""
    if not header:
        return None
    header = header[:_MAX_HEADER]
    system = _first(header, _SYSTEMS)
    browser = _first(header, _BROWSERS)
    if browser is None and "Safari/" in header and "Version/" in header:
        browser = "Safari"
    if browser is None and system is None:
        return _product(header)
    if browser is None:
        return f"A browser on {system}" if header.startswith("Mozilla/") else _product(header) or system
    return f"{browser} on {system}" if system else browser


def _first(header: str, table: tuple[tuple[str, str], ...]) -> str | None:
    return next((name for token, name in table if token in header), None)


def _product(header: str) -> str | None:
    """The product name of a client that is no browser (`curl/8.5.0` -> `curl`)."""
    match = _PRODUCT.match(header.strip())
    if match is None or match.group(0) == "Mozilla":
        return None
    return match.group(0)
