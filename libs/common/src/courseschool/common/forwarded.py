"""The caller's address behind trusted proxies, for both servers (granian in `serve`
and in the all-in-one's `run`, any server in front of `platform/asgi.py`).

`X-Forwarded-For` is a list each proxy appends its own peer to: only the entries on the
right were written by proxies we trust, the leftmost is whatever the caller sent. So the
list is believed only when the connecting peer is in FORWARDED_ALLOW_IPS, and it is read
from the right: trusted proxies are skipped, and the first address that is not one of
them is the caller. `*` trusts any connecting peer as one proxy: the caller is then the
rightmost entry, the address that proxy saw (never the leftmost, which the caller
chooses). `X-Forwarded-Proto` is taken from a trusted peer only. An entry that is not an
IP address leaves the connecting address in place. The empty default trusts nobody.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

# Plain ASGI callables: the settings import this module, and need no framework.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_SCHEMES = {"http": ("http", "ws"), "https": ("https", "wss")}


class TrustedProxies:
    """FORWARDED_ALLOW_IPS parsed: empty (nobody), `*` (any peer, one hop), or comma
    separated addresses and networks (`10.0.0.0/8, 127.0.0.1`)."""

    def __init__(self, value: str) -> None:
        value = value.strip()
        self.any_peer = value == "*"
        self.networks: list[Network] = []
        if self.any_peer or not value:
            return
        for item in (part.strip() for part in value.split(",")):
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(
                    f"FORWARDED_ALLOW_IPS: {item!r} is not an IP address or network (or use * alone)"
                ) from None

    def _listed(self, address: Address | None) -> bool:
        return address is not None and any(address in network for network in self.networks)

    def trusts_peer(self, host: str | None) -> bool:
        return self.any_peer or self._listed(parse_address(host))

    def client_from(self, forwarded_for: Iterable[str]) -> str | None:
        """The caller's address from the X-Forwarded-For entries (in order), sent by a
        trusted peer: the first from the right that is not a listed proxy (with `*`, the
        rightmost). None when there is no usable entry."""
        hops = [hop.strip() for line in forwarded_for for hop in line.split(",")]
        hops = [hop for hop in hops if hop]
        for hop in reversed(hops):
            address = parse_address(hop)
            if address is None:
                return None
            if self.any_peer or not self._listed(address):
                return str(address)
        # Every hop is a trusted proxy: the farthest of them made the request.
        return str(parse_address(hops[0])) if hops else None


def parse_address(value: str | None) -> Address | None:
    """An IP address, as written in X-Forwarded-For (`192.0.2.1`, `2001:db8::1`,
    `[2001:db8::1]`, with or without `:port`), or None."""
    if not value:
        return None
    text = value.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # IPv4 with a port
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class ProxyHeadersMiddleware:
    """Sets `scope["client"]` (and `scheme`) from a trusted peer's forwarding headers."""

    def __init__(self, app: ASGIApp, trusted: str | TrustedProxies) -> None:
        self.app = app
        self.trusted = trusted if isinstance(trusted, TrustedProxies) else TrustedProxies(trusted)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            peer = scope.get("client")
            if self.trusted.trusts_peer(peer[0] if peer else None):
                scope = self._rewritten(scope)
        await self.app(scope, receive, send)

    def _rewritten(self, scope: Any) -> Any:
        forwarded_for: list[str] = []
        proto = ""
        for name, value in scope["headers"]:
            if name == b"x-forwarded-for":
                forwarded_for.append(value.decode("latin-1"))
            elif name == b"x-forwarded-proto":
                proto = value.decode("latin-1")
        client = self.trusted.client_from(forwarded_for)
        if client is None:
            return scope
        scope = {**scope, "client": (client, 0)}
        # The nearest proxy's word on the scheme: the rightmost entry.
        scheme = _SCHEMES.get(proto.rpartition(",")[2].strip().lower())
        if scheme is not None:
            scope["scheme"] = scheme[scope["type"] == "websocket"]
        return scope
