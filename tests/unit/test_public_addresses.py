"""Security review finding 9: which addresses a Client ID Metadata Document may be
fetched from. An IPv6 address that carries an IPv4 address (IPv4-mapped, 6to4, Teredo,
NAT64, IPv4-compatible) reaches that IPv4 address, so it is public only if that is."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.client_id_metadata import is_public_address


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "169.254.169.254",
        "100.64.0.1",
        "224.0.0.1",
        "0.0.0.0",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:10.0.0.1",  # IPv4-mapped
        "::ffff:127.0.0.1",
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2001:0:a00:1::1",  # Teredo, server 10.0.0.1
        "2001:0:808:808:0:ffff:f5ff:fffe",  # Teredo, public server, client 10.0.0.1 (obfuscated)
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b:1::808:808",  # local-use NAT64: translated to anything, never public
        "::a00:1",  # IPv4-compatible 10.0.0.1
        "::7f00:1",  # IPv4-compatible 127.0.0.1
    ],
)
def test_private_and_embedded_private_addresses_are_refused(address: str) -> None:
    assert not is_public_address(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "93.184.216.34",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::1",  # 6to4 of a public address
        "64:ff9b::808:808",  # NAT64 of a public address (an IPv6-only network's DNS64 answer)
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_public_address(address)


def test_an_address_that_is_not_one_is_refused() -> None:
    assert not is_public_address("not-an-address")
