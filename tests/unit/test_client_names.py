"""Client names (security review finding 7, issue 24): hidden characters refused, names
compared as a reader sees them (NFKC, the UTS #39 confusable skeleton, case, marks,
decorations), the platform's own name and integrations' names reserved, and who vouches
for a name."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.client_id_metadata import MetadataDocumentError, client_from_document
from courseschool.authz.protocol.client_names import (
    PLATFORM_NAME,
    client_kind,
    imitates,
    name_keys,
    name_problem,
    reserved_name_problem,
    skeleton,
)
from courseschool.authz.protocol.registration import ClientMetadata, check_name_is_not_reserved
from courseschool.common.errors import InvalidClientMetadataError
from courseschool.common.text import has_hidden

from .factories import LOOPBACK_CB, make_client


def test_the_skeleton_is_uts_39s() -> None:
    """Figures of UTS #39 §4 and confusables.txt: prototypes, not similarity."""
    assert skeleton("\u0430") == "a"  # CYRILLIC SMALL LETTER A
    assert skeleton("\u13df") == "C"  # CHEROKEE LETTER TLI
    assert skeleton("m") == "rn" and skeleton("1") == "l" and skeleton("I") == "l" and skeleton("0") == "O"
    assert skeleton("paypal") == skeleton("p\u0430yp\u0430l")
    assert skeleton("x") == "x" and skeleton("Course") == "Course"


@pytest.mark.parametrize(
    ("name", "reserved"),
    [
        ("CRM", "CRM"),
        ("crm", "CRM"),  # case
        ("CRM (Verified)", "CRM"),
        ("  crm   OFFICIAL!! ", "CRM"),
        ("✔ Trusted — C.R.M.", "CRM"),
        ("\uff23\uff32\uff2d", "CRM"),  # full-width
        ("\u0421RM", "CRM"),  # CYRILLIC CAPITAL LETTER ES
        ("\u13dfRM", "CRM"),  # CHEROKEE LETTER TLI
        ("C\u0301R\u0300M\u0308", "CRM"),  # combining marks
        ("\U0001d402\U0001d411\U0001d40c", "CRM"),  # mathematical bold capitals
        ("Partner CRRN", "Partner CRM"),  # "rn" reads as "m"
        ("\ufb01le sync", "File Sync"),  # the ligature fi
        ("Stra\u00dfe", "STRASSE"),  # case folding, not lower-casing
        ("Cafe\u0301", "Café"),  # a combining accent
        ("Al Tutor", "AI Tutor"),  # a capital I reads as a small L
        ("\u0410\u0406 tutor", "ai Tutor"),  # Cyrillic A and Byelorussian-Ukrainian I, other case
        ("C0urse Sch00l", PLATFORM_NAME),  # digits for letters
        ("\u0421\u043eurse \u0405chool", PLATFORM_NAME),  # Cyrillic Es, o, Dze
        ("\uff43\uff4f\uff55\uff52\uff53\uff45\u3000\uff53\uff43\uff48\uff4f\uff4f\uff4c", PLATFORM_NAME),
        ("COURSE SCHOOL (official)", PLATFORM_NAME),
        ("Course-School", PLATFORM_NAME),
        ("Course School \u2122", PLATFORM_NAME),  # TRADE MARK SIGN: NFKC makes it "TM", still a symbol
        ("Course School\u2122", PLATFORM_NAME),
        ("Course School \u2120", PLATFORM_NAME),  # SERVICE MARK
        ("\u24b8ourse School \u00ae", PLATFORM_NAME),  # a circled C reads as a C
        ("CRM \u2122 (Official)", "CRM"),
    ],
)
def test_names_compare_by_their_confusable_skeleton(name: str, reserved: str) -> None:
    assert imitates(name, [reserved]), (name_keys(name), name_keys(reserved))


@pytest.mark.parametrize(
    ("name", "reserved"),
    [
        ("CRM Helper", "CRM"),
        ("My CRM", "CRM"),
        ("CRN", "CRM"),  # another letter, not another dress of the same one
        ("Course School Sync for Moodle", PLATFORM_NAME),
        ("Source School", PLATFORM_NAME),
        ("✔✔✔", "✓"),  # names of symbols only read as no one's
        ("Verified", "Official"),
        ("Course School TM", PLATFORM_NAME),  # letters someone wrote are letters
    ],
)
def test_other_names_stay_free(name: str, reserved: str) -> None:
    assert not imitates(name, [reserved])


def test_imitation_is_equality_after_normalisation_not_similarity() -> None:
    assert imitates("crm (official)", ["Partner", "CRM"])
    assert not imitates("CRM Helper", ["CRM"])
    assert not imitates("CRM", [])


def test_the_platforms_name_is_reserved_even_without_integrations() -> None:
    assert "platform's own name" in (reserved_name_problem("C\u043eurse Sch\u043e\u043el", []) or "")
    assert "integration" in (reserved_name_problem("\u0421RM", ["CRM"]) or "")
    assert reserved_name_problem("My CRM", ["CRM"]) is None


@pytest.mark.parametrize(
    "name",
    [
        *("\u202eabc", "a\u202ab", "a\u2066b\u2069", "a\u200bb", "a\u200db", "a\ufeffb"),  # Cf: bidi, zero-width
        *("\x1b[31m", "a\x7f", "a\x9bb", "a\x00b", "a\nb", "a\tb"),  # Cc: C0, DEL, C1
        *("a\ue000", "a\U000f0000", "a\u2028b", "a\u2029b"),  # Co, Zl, Zp
    ],
)
def test_hidden_characters_make_a_name_unusable(name: str) -> None:
    assert has_hidden(name)
    assert "control" in (name_problem(name) or "")


@pytest.mark.parametrize("name", ["My App", "Café Ünïcødé", "日本語のアプリ", "تطبيق", "App 🚀", "x" * 200])
def test_ordinary_names_are_fine(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_name_length_is_bounded(name: str) -> None:
    assert "1 to 200" in (name_problem(name) or "")


def test_registration_refuses_an_integrations_name() -> None:
    with pytest.raises(InvalidClientMetadataError, match="integration"):
        check_name_is_not_reserved(ClientMetadata(client_name="CRM (Verified)"), ["CRM"])
    with pytest.raises(InvalidClientMetadataError, match="platform's own name"):
        check_name_is_not_reserved(ClientMetadata(client_name="\u0421ourse School"), ["CRM"])
    check_name_is_not_reserved(ClientMetadata(client_name="My CRM"), ["CRM"])
    check_name_is_not_reserved(ClientMetadata(client_name=None), ["CRM"])


def test_metadata_documents_follow_the_same_name_rules() -> None:
    url = "https://app.example/client.json"
    with pytest.raises(MetadataDocumentError, match="control"):
        client_from_document(
            url,
            {"client_id": url, "client_name": "\u202eMRC", "redirect_uris": [LOOPBACK_CB]},
            now=0,
            trusted_host=False,
        )
    fine = client_from_document(
        url, {"client_id": url, "client_name": "Agent", "redirect_uris": [LOOPBACK_CB]}, now=0, trusted_host=False
    )
    assert fine.client_name == "Agent"


def test_only_an_integrations_name_is_vouched_for() -> None:
    assert client_kind(make_client(is_integration=True)) == "integration"
    assert client_kind(make_client(verified_origin="app.example")) == "metadata_document"
    assert client_kind(make_client()) == "self_registered"
