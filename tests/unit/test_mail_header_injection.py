"""A message to a person carries names chosen by others (an app's name comes from whoever
registered it): none may make a header, hide text with an invisible format character,
or put markup in the HTML part. The builder is tested on its own, whatever the
registration refuses first."""

from __future__ import annotations

import email
from email.message import EmailMessage
from email.policy import default

import pytest

from courseschool.authz.mail.account_messages import ACCOUNT_KINDS
from courseschool.authz.mail.messages import Recipient, Sender, build_message, shown_name
from courseschool.authz.storage.mail_outbox import KINDS, NEW_CONNECTION

SENDER = Sender(mail_from="Course School <no-reply@school.example>", base_url="https://auth.school.example")
TO = Recipient(email="pat@school.example", name="Pat")
NOW = 1_795_000_000


def _built(name: str, kind: str = NEW_CONNECTION, to: Recipient = TO) -> tuple[EmailMessage, bytes]:
    details = {"client_name": name, "device": "Firefox on Linux", "address": "203.0.113.9", "at": NOW}
    message = build_message(kind, details, to=to, sender=SENDER, message_id="0f0e", now=NOW)
    wire = message.as_bytes()
    parsed = email.message_from_bytes(wire, policy=default)
    assert isinstance(parsed, EmailMessage)
    return parsed, wire


@pytest.mark.parametrize(
    "name",
    [
        "Evil\r\nBcc: victim@example.com",
        "Evil\nBcc: victim@example.com",
        "Evil\rBcc: victim@example.com",
        "Evil\r\n\r\n<html>body</html>",
        "Evil\u2028Bcc: victim@example.com",
        "Evil\x00\x1b[31mBcc: victim@example.com",
        "Evil\x85Bcc: victim@example.com",
    ],
)
@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in ACCOUNT_KINDS])  # those name no app
def test_an_app_name_with_line_breaks_makes_no_header(name: str, kind: str) -> None:
    parsed, wire = _built(name, kind)
    assert parsed["Bcc"] is None and parsed.get_all("Bcc") is None
    assert sorted(parsed.keys()) == sorted(
        ["From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted", "MIME-Version", "Content-Type"]
    )
    assert "Evil" in parsed["Subject"] and "\n" not in parsed["Subject"] and "\r" not in parsed["Subject"]
    headers = wire.split(b"\r\n\r\n", 1)[0]
    assert b"\nBcc:" not in headers and b"\x00" not in wire and b"\x1b" not in wire


def test_an_invisible_reordering_character_is_dropped() -> None:
    parsed, _ = _built("Good\u202egnp.exe")
    assert parsed["Subject"] == "«Goodgnp.exe» was connected to your Course School account"


def test_markup_in_a_name_is_text_in_the_html_part() -> None:
    parsed, _ = _built('<img src="https://tracker.example/p.gif">Helper')
    html = parsed.get_body(preferencelist=("html",))
    assert html is not None
    content = html.get_content()
    assert "<img" not in content and "&lt;img src=&#34;https://tracker.example/p.gif&#34;&gt;Helper" in content
    text = parsed.get_body(preferencelist=("plain",))
    assert text is not None and '<img src="https://tracker.example/p.gif">Helper' in text.get_content()


def test_a_long_name_is_cut_and_an_empty_one_named() -> None:
    assert len(shown_name("x" * 500)) == 80
    assert shown_name("\r\n\t ") == "An unnamed application"
    assert shown_name(None) == "An unnamed application"


def test_a_recipient_address_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError):
        _built("Fine", to=Recipient(email="pat@school.example\r\nBcc: victim@example.com", name="Pat"))


def test_a_recipient_name_is_shown_as_a_display_name_only() -> None:
    parsed, _ = _built("Fine", to=Recipient(email="pat@school.example", name="Pat\r\nBcc: victim@example.com"))
    assert parsed["Bcc"] is None
    assert parsed["To"].addresses[0].addr_spec == "pat@school.example"
    assert parsed["To"].addresses[0].display_name == "Pat Bcc: victim@example.com"


def test_links_go_to_our_pages_only() -> None:
    parsed, _ = _built("Fine")
    html = parsed.get_body(preferencelist=("html",))
    assert html is not None
    assert 'href="https://auth.school.example/oauth/apps"' in html.get_content()
    assert html.get_content().count("href=") == 1


@pytest.mark.parametrize("kind", ACCOUNT_KINDS)
def test_a_school_or_person_name_with_line_breaks_makes_no_header(kind: str) -> None:
    """The messages about a person's own account name their school (in an invitation's
    subject) and the person, both typed by someone else."""
    evil = "Evil\r\nBcc: victim@example.com"
    details = {"school_name": evil, "token": "t0k3n", "expires_at": NOW + 60, "change": "password_changed", "at": NOW}
    message = build_message(
        kind, details, to=Recipient(email=TO.email, name=evil), sender=SENDER, message_id="1", now=NOW
    )
    wire = message.as_bytes()
    parsed = email.message_from_bytes(wire, policy=default)
    assert parsed["Bcc"] is None and b"\nBcc:" not in wire.split(b"\r\n\r\n", 1)[0]
    assert "\n" not in parsed["Subject"] and "\n" not in str(parsed["To"])


def test_a_link_message_whose_link_is_gone_is_not_built() -> None:
    """A link spent (its sealed token cleared) before its message left: nothing to send."""
    with pytest.raises(ValueError):
        build_message("password_reset", {"at": NOW}, to=TO, sender=SENDER, message_id="2", now=NOW)
