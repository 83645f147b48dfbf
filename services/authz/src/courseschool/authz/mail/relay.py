"""SMTP_URL: the relay the operator's mail leaves through (RFC 5321), and how.

- `smtp://user:password@host:587`: submission with STARTTLS, required (RFC 3207); a
  relay that does not offer it is refused, so credentials never travel in the clear;
- `smtps://user:password@host:465`: TLS from the first byte (RFC 8314 §3.3);
- `smtp+plain://127.0.0.1:1025`: no TLS and no credentials, for a catcher on this
  machine only (`make run`'s): any other host is refused.

The user name and password are percent-decoded (an `@` in a password is `%40`). The
port defaults to 587 and 465."""

from __future__ import annotations

import ipaddress
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from typing import Literal
from urllib.parse import unquote, urlsplit

import msgspec

Security = Literal["starttls", "tls", "none"]
_SCHEMES: dict[str, tuple[Security, int]] = {
    "smtp": ("starttls", 587),
    "smtps": ("tls", 465),
    "smtp+plain": ("none", 25),
}


class Relay(msgspec.Struct, frozen=True, kw_only=True):
    host: str
    port: int
    security: Security
    username: str | None = None
    password: str | None = None

    def __repr__(self) -> str:  # never the password, in a log or a traceback
        return f"Relay({self.security}://{self.host}:{self.port}, user={self.username!r})"

    __str__ = __repr__


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_smtp_url(url: str) -> Relay:
    """The relay SMTP_URL names; ValueError saying what is wrong (never echoing the URL,
    which may hold a password)."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ValueError("SMTP_URL must start with smtp:// (STARTTLS), smtps:// (TLS) or smtp+plain:// (this machine)")
    security, default_port = _SCHEMES[parts.scheme]
    try:
        port = parts.port or default_port
    except ValueError:
        raise ValueError("SMTP_URL has an invalid port") from None
    host = parts.hostname
    if not host or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("SMTP_URL must name a host and nothing after it (scheme://user:password@host:port)")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    if (username is None) != (password is None):
        raise ValueError("SMTP_URL must give both a user name and a password, or neither")
    if security == "none" and not _loopback(host):
        raise ValueError("smtp+plain:// (no TLS) is for a relay on this machine only: use smtp:// or smtps://")
    if security == "none" and username is not None:
        raise ValueError("smtp+plain:// takes no credentials: they would travel in the clear")
    return Relay(host=host, port=port, security=security, username=username, password=password)


def from_address(mail_from: str) -> Address:
    """MAIL_FROM as an address (ValueError when it is none, or holds a line break)."""
    message = EmailMessage(policy=SMTP)
    message["From"] = mail_from
    addresses = message["From"].addresses
    if len(addresses) != 1 or not addresses[0].domain or not addresses[0].username:
        raise ValueError("MAIL_FROM must be one e-mail address (or Name <address>)")
    return addresses[0]
