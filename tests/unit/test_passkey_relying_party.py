"""The relying party of passkeys is the host of the public origin (WebAuthn §5.1.2);
an IP address is none, and plain http is a secure context on localhost only."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.passkeys import RelyingParty, clean_name, relying_party, user_handle


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://school.example", RelyingParty(id="school.example", origin="https://school.example")),
        (
            "https://Auth.School.Example:8443",
            RelyingParty(id="auth.school.example", origin="https://auth.school.example:8443"),
        ),
        ("http://localhost:8000", RelyingParty(id="localhost", origin="http://localhost:8000")),
        ("http://dev.localhost:8000", RelyingParty(id="dev.localhost", origin="http://dev.localhost:8000")),
        ("http://127.0.0.1:8000", "ip_address"),
        ("https://127.0.0.1", "ip_address"),
        ("http://[::1]:8000", "ip_address"),
        ("https://[2001:db8::1]", "ip_address"),
        ("http://school.example", "not_secure"),
    ],
)
def test_the_relying_party_of_a_public_origin(base_url: str, expected: object) -> None:
    assert relying_party(base_url) == expected


def test_a_user_handle_is_the_persons_id_and_nothing_else() -> None:
    assert user_handle("0b7f6c1e-2a9d-4c57-8e1f-2b7d9a4c6e81") == bytes.fromhex("0b7f6c1e2a9d4c578e1f2b7d9a4c6e81")


@pytest.mark.parametrize(
    ("typed", "kept"),
    [("  Work \n laptop ", "Work laptop"), ("", ""), ("x" * 100, "x" * 64), ("\t", "")],
)
def test_a_passkeys_name_is_one_trimmed_line(typed: str, kept: str) -> None:
    assert clean_name(typed) == kept
