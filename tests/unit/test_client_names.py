"""Client names (security review finding 7): hidden characters refused, names compared
as a reader sees them, and who vouches for a name."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.client_id_metadata import MetadataDocumentError, client_from_document
from courseschool.authz.protocol.client_names import client_kind, comparable_name, imitates, name_problem
from courseschool.authz.protocol.registration import ClientMetadata, check_name_is_not_an_integrations
from courseschool.common.errors import InvalidClientMetadataError
from courseschool.common.text import has_hidden

from .factories import LOOPBACK_CB, make_client


@pytest.mark.parametrize(
    ("name", "comparable"),
    [
        ("CRM", "crm"),
        ("CRM (Verified)", "crm"),
        ("  crm   OFFICIAL!! ", "crm"),
        ("✔ Trusted — C.R.M.", "crm"),
        ("\uff23\uff32\uff2d", "crm"),  # full-width
        ("ﬁle sync", "filesync"),  # the ligature fi
        ("Straße", "strasse"),  # case folding, not lower-casing
        ("Cafe\u0301", "café"),  # a combining accent composes
        ("Verified", ""),
    ],
)
def test_finding_07_names_compare_after_normalisation(name: str, comparable: str) -> None:
    assert comparable_name(name) == comparable


def test_finding_07_imitation_is_equality_after_normalisation_not_similarity() -> None:
    assert imitates("crm (official)", ["Partner", "CRM"])
    assert not imitates("CRM Helper", ["CRM"])
    assert not imitates("CRM", [])


@pytest.mark.parametrize(
    "name",
    [
        *("\u202eabc", "a\u202ab", "a\u2066b\u2069", "a\u200bb", "a\u200db", "a\ufeffb"),  # Cf: bidi, zero-width
        *("\x1b[31m", "a\x7f", "a\x9bb", "a\x00b", "a\nb", "a\tb"),  # Cc: C0, DEL, C1
        *("a\ue000", "a\U000f0000", "a\u2028b", "a\u2029b"),  # Co, Zl, Zp
    ],
)
def test_finding_07_hidden_characters_make_a_name_unusable(name: str) -> None:
    assert has_hidden(name)
    assert "control" in (name_problem(name) or "")


@pytest.mark.parametrize("name", ["My App", "Café Ünïcødé", "日本語のアプリ", "تطبيق", "App 🚀", "x" * 200])
def test_finding_07_ordinary_names_are_fine(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_finding_07_name_length_is_bounded(name: str) -> None:
    assert "1 to 200" in (name_problem(name) or "")


def test_finding_07_registration_refuses_an_integrations_name() -> None:
    with pytest.raises(InvalidClientMetadataError, match="integration"):
        check_name_is_not_an_integrations(ClientMetadata(client_name="CRM (Verified)"), ["CRM"])
    check_name_is_not_an_integrations(ClientMetadata(client_name="My CRM"), ["CRM"])
    check_name_is_not_an_integrations(ClientMetadata(client_name=None), ["CRM"])


def test_finding_07_metadata_documents_follow_the_same_name_rules() -> None:
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


def test_finding_07_only_an_integrations_name_is_vouched_for() -> None:
    assert client_kind(make_client(is_integration=True)) == "integration"
    assert client_kind(make_client(verified_origin="app.example")) == "metadata_document"
    assert client_kind(make_client()) == "self_registered"
