"""The rules of second factors (protocol/second_factors.py): RFC 6238 codes within one
step of drift, each step once; recovery codes as made, typed and digested."""

from __future__ import annotations

import base64

import pyotp
import pytest

from courseschool.authz.protocol.second_factors import (
    STEP,
    accepted_step,
    looks_like_recovery_code,
    new_recovery_codes,
    new_totp_secret,
    normalised_code,
    provisioning_uri,
    recovery_code_digest,
)

NOW = 1_800_000_000


def test_rfc_6238_appendix_b_vector() -> None:
    """RFC 6238 Appendix B, SHA-1, T = 59: 94287082 (eight digits); the six we use are its last six."""
    secret = base64.b32encode(b"12345678901234567890").decode()
    assert accepted_step(secret, "287082", now=59, last_step=-5) == 1


@pytest.mark.parametrize(("offset", "accepted"), [(-2, False), (-1, True), (0, True), (1, True), (2, False)])
def test_one_step_of_drift_either_side(offset: int, accepted: bool) -> None:
    secret = new_totp_secret()
    code = pyotp.TOTP(secret).at(NOW + offset * STEP)
    assert (accepted_step(secret, code, now=NOW, last_step=0) is not None) is accepted


def test_a_step_is_accepted_once_and_never_an_earlier_one() -> None:
    secret = new_totp_secret()
    code = pyotp.TOTP(secret).at(NOW)
    step = accepted_step(secret, code, now=NOW, last_step=0)
    assert step == NOW // STEP
    assert accepted_step(secret, code, now=NOW, last_step=step) is None
    earlier = pyotp.TOTP(secret).at(NOW - STEP)
    assert accepted_step(secret, earlier, now=NOW, last_step=step) is None
    assert accepted_step(secret, pyotp.TOTP(secret).at(NOW + STEP), now=NOW, last_step=step) == step + 1


@pytest.mark.parametrize("typed", ["", "12345", "1234567", "abcdef", "\uff11\uff12\uff13\uff14\uff15\uff16"])
def test_what_is_not_six_ascii_digits_is_no_code(typed: str) -> None:
    assert accepted_step(new_totp_secret(), typed, now=NOW, last_step=0) is None


def test_recovery_codes_as_made_and_as_typed() -> None:
    codes = new_recovery_codes()
    assert len(codes) == 10 and len(set(codes)) == 10
    for code in codes:
        assert looks_like_recovery_code(normalised_code(code))
        assert normalised_code(f"  {code.upper().replace('-', ' ')} ") == code.replace("-", "")
    key = b"k" * 32
    assert recovery_code_digest(key, "u1", codes[0]) == recovery_code_digest(key, "u1", codes[0].upper())
    assert recovery_code_digest(key, "u1", codes[0]) != recovery_code_digest(key, "u2", codes[0])
    assert recovery_code_digest(key, "u1", codes[0]) != recovery_code_digest(b"x" * 32, "u1", codes[0])


def test_the_qr_code_carries_the_key_uri_format() -> None:
    secret = new_totp_secret()
    uri = provisioning_uri(secret, "ana@example.test")
    assert uri.startswith("otpauth://totp/Course%20School:ana%40example.test?")
    assert f"secret={secret}" in uri and "issuer=Course%20School" in uri
    assert len(secret) == 32  # 160 bits


def test_the_qr_code_scales_whole() -> None:
    """The stylesheet sets the code's width: with a fixed size and no viewBox, a long key
    URI's code (57 modules, 285 px) was cut at 192 px, its right and bottom lost."""
    from courseschool.authz.web.qr import qr_svg

    svg = str(qr_svg(provisioning_uri(new_totp_secret(), "owner-8c34e716@example.test"), label="QR <code>"))
    assert 'viewBox="0 0 ' in svg and " width=" not in svg.split(">")[0]
    assert 'aria-label="QR &lt;code&gt;"' in svg and "<script" not in svg
