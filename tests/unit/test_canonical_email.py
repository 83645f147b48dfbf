"""Security review, finding 6: one canonical form of an email (NFKC, case folding,
NFKC; protocol/emails.py), used by lookups and lockout keys alike."""

from __future__ import annotations

import unicodedata

import pytest

from courseschool.authz.protocol.emails import canonical_email


@pytest.mark.parametrize(
    "variant",
    [
        "victim@example.test",
        "VICTIM@EXAMPLE.TEST",
        "Victim@Example.Test",
        "  victim@example.test\t",
        "\uff56\uff49\uff43\uff54\uff49\uff4d@example.test",  # fullwidth letters
        "\uff36\uff29\uff23\uff34\uff29\uff2d@\uff45xample.test",
        "v\u2170ctim@example.test",  # SMALL ROMAN NUMERAL ONE
        "victim\uff20example.test",  # FULLWIDTH COMMERCIAL AT
    ],
)
def test_case_and_compatibility_variants_have_one_form(variant: str) -> None:
    assert canonical_email(variant) == "victim@example.test"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("stra\u00dfe@example.test", "STRASSE@example.test"),  # full case folding: sharp s
        ("\ufb01le@example.test", "FILE@example.test"),  # the fi ligature
        ("\u03b1\u03c2@example.test", "\u0391\u03a3@example.test"),  # Greek final sigma
        ("cafe\u0301@example.test", "CAF\u00c9@example.test"),  # combining accent, composed
    ],
)
def test_case_folding_goes_beyond_lower_casing(one: str, other: str) -> None:
    assert canonical_email(one) == canonical_email(other)


@pytest.mark.parametrize(
    "look_alike",
    ["v\u0130ctim@example.test", "v\u0131ctim@example.test"],  # capital I with dot; dotless i
)
def test_dotted_and_dotless_i_name_another_address(look_alike: str) -> None:
    """U+0130 folds to i + combining dot above: not `victim`, so it finds no one and
    has a lockout key of its own (PostgreSQL's lower() made it `victim`)."""
    assert canonical_email(look_alike) != canonical_email("victim@example.test")
    assert canonical_email(look_alike) == canonical_email(canonical_email(look_alike))


def test_the_canonical_form_is_stable() -> None:
    for code in range(0x30000):
        char = chr(code)
        if unicodedata.category(char) in ("Cn", "Cs"):
            continue
        once = canonical_email(f"a{char}b")
        assert canonical_email(once) == once, hex(code)
