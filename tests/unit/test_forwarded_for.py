"""Finding 11: X-Forwarded-For is believed only from a configured proxy, and read from
the right (the caller writes the leftmost entries itself); `*` trusts the connecting
peer as one proxy and takes the rightmost entry; X-Forwarded-Proto only from a trusted
peer. The walk itself, and the middleware around a bare ASGI app."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.common.forwarded import ProxyHeadersMiddleware, TrustedProxies
from courseschool.common.settings import BaseSettings, SettingsError, load_settings


@pytest.mark.parametrize(
    ("trusted", "forwarded_for", "client"),
    [
        # one listed proxy: it appended the caller's address; what the caller wrote is ignored
        ("10.0.0.0/8", ["203.0.113.7"], "203.0.113.7"),
        ("10.0.0.0/8", ["198.51.100.66, 203.0.113.7"], "203.0.113.7"),
        # a chain of listed proxies is skipped, the first address not in it is the caller
        ("10.0.0.0/8, 192.0.2.1", ["198.51.100.66, 203.0.113.7, 10.1.2.3, 192.0.2.1"], "203.0.113.7"),
        # `*`: the peer is one proxy, the caller the rightmost entry (never the leftmost)
        ("*", ["198.51.100.66, 203.0.113.7"], "203.0.113.7"),
        ("*", ["203.0.113.7, 10.0.0.2"], "10.0.0.2"),
        # several header lines are one list, in order (RFC 9110 §5.3)
        ("*", ["198.51.100.66", "203.0.113.7"], "203.0.113.7"),
        ("10.0.0.0/8", ["198.51.100.66", "203.0.113.7, 10.0.0.2"], "203.0.113.7"),
        # every hop a listed proxy: the farthest of them
        ("10.0.0.0/8", ["10.0.0.3, 10.0.0.2"], "10.0.0.3"),
        # ports and brackets as some proxies write them; addresses in canonical form
        ("*", ["[2001:DB8::1]:443"], "2001:db8::1"),
        ("*", ["2001:db8::1"], "2001:db8::1"),
        ("*", ["192.0.2.9:51234"], "192.0.2.9"),
        # empty entries are skipped; garbage left of the caller is never reached
        ("*", ["junk, , 203.0.113.7,"], "203.0.113.7"),
        # an entry that is not an address where the caller should be: the peer stays
        ("*", ["203.0.113.7, unknown"], None),
        ("10.0.0.0/8", ["not-an-ip, 10.0.0.2"], None),
        ("*", [""], None),
    ],
)
def test_the_walk_takes_the_first_untrusted_hop_from_the_right(
    trusted: str, forwarded_for: list[str], client: str | None
) -> None:
    assert TrustedProxies(trusted).client_from(forwarded_for) == client


async def _seen(trusted: str, peer: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.update(client=scope["client"], scheme=scope["scheme"])

    scope = {"type": "http", "client": (peer, 50000), "scheme": "http", "headers": headers}
    await ProxyHeadersMiddleware(app, trusted)(scope, None, None)
    return seen


async def test_an_unlisted_peer_keeps_its_own_address_and_scheme() -> None:
    headers = [(b"x-forwarded-for", b"203.0.113.7"), (b"x-forwarded-proto", b"https")]
    for trusted in ("", "10.0.0.0/8", "192.0.2.1"):
        assert await _seen(trusted, "127.0.0.1", headers) == {"client": ("127.0.0.1", 50000), "scheme": "http"}


async def test_a_listed_peer_sets_address_and_scheme() -> None:
    headers = [(b"x-forwarded-for", b"198.51.100.66, 203.0.113.7"), (b"x-forwarded-proto", b"https")]
    assert await _seen("127.0.0.1", "127.0.0.1", headers) == {"client": ("203.0.113.7", 0), "scheme": "https"}
    # An unknown scheme is not believed; without X-Forwarded-For nothing changes.
    odd = [(b"x-forwarded-for", b"203.0.113.7"), (b"x-forwarded-proto", b"gopher")]
    assert (await _seen("*", "10.0.0.2", odd))["scheme"] == "http"
    assert await _seen("*", "10.0.0.2", [(b"x-forwarded-proto", b"https")]) == {
        "client": ("10.0.0.2", 50000),
        "scheme": "http",
    }


def test_nobody_is_trusted_by_default_and_bad_entries_are_refused() -> None:
    assert load_settings(BaseSettings, {}).forwarded_allow_ips == ""
    assert not TrustedProxies("").trusts_peer("127.0.0.1")
    for bad in ("localhost", "10.0.0.0/33", "127.0.0.1, *", "gateway"):
        with pytest.raises(SettingsError, match="FORWARDED_ALLOW_IPS"):
            load_settings(BaseSettings, {"FORWARDED_ALLOW_IPS": bad})
