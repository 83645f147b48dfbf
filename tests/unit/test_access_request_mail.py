"""The messages about a request for a school's approval of an app (issue 39) carry names
and words chosen by others: the app's name (whoever registered it), the name of who
asked, their reason, the steward's note. None may make a header or markup."""

from __future__ import annotations

import email
from email.message import EmailMessage
from email.policy import default
from typing import Any

import pytest

from courseschool.authz.mail.messages import Recipient, Sender, build_message
from courseschool.authz.storage.access_requests import ACCESS_REQUEST_DECIDED, ACCESS_REQUESTED

SENDER = Sender(mail_from="Course School <no-reply@school.example>", base_url="https://auth.school.example")
TO = Recipient(email="owner@school.example", name="Olive")
NOW = 1_795_000_000
INJECTED = "Evil\r\nBcc: victim@example.com\r\n\r\n<img src=x>"


def _built(kind: str, **details: Any) -> tuple[EmailMessage, bytes]:
    base = {"client_name": INJECTED, "school_name": "Acme School", "scope": "openid courses:read", "at": NOW}
    message = build_message(kind, base | details, to=TO, sender=SENDER, message_id="0f0e", now=NOW)
    wire = message.as_bytes()
    parsed = email.message_from_bytes(wire, policy=default)
    assert isinstance(parsed, EmailMessage)
    return parsed, wire


@pytest.mark.parametrize(
    ("kind", "details"),
    [
        (ACCESS_REQUESTED, {"requester": INJECTED, "reason": INJECTED, "requester_role": "student"}),
        (ACCESS_REQUEST_DECIDED, {"decision": "declined", "note": INJECTED}),
        (ACCESS_REQUEST_DECIDED, {"decision": "approved"}),
        (ACCESS_REQUEST_DECIDED, {"decision": "expired"}),
    ],
)
def test_names_reasons_and_notes_make_no_header_and_no_markup(kind: str, details: dict[str, Any]) -> None:
    parsed, wire = _built(kind, **details)
    assert parsed.get_all("Bcc") is None
    assert sorted(parsed.keys()) == sorted(
        ["From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted", "MIME-Version", "Content-Type"]
    )
    assert "\n" not in parsed["Subject"] and "Evil Bcc: victim@example.com" in parsed["Subject"]
    assert b"\nBcc:" not in wire.split(b"\r\n\r\n", 1)[0]
    html = parsed.get_body(preferencelist=("html",))
    assert html is not None and "<img" not in html.get_content()


def test_the_request_names_who_asked_why_and_the_areas_in_words() -> None:
    parsed, _ = _built(ACCESS_REQUESTED, client_name="Homework Helper", requester="Sam", reason="For my essay")
    assert parsed["Subject"] == "Sam asks your school to approve «Homework Helper»"
    text = parsed.get_body(preferencelist=("plain",))
    assert text is not None
    body = text.get_content()
    assert "- Why: For my essay" in body and "- Courses: see" in body
    assert "https://auth.school.example/oauth/school/apps" in body


@pytest.mark.parametrize(
    ("decision", "subject"),
    [
        ("approved", "Your school approved your request for «Helper»"),
        ("declined", "Your school declined your request for «Helper»"),
        ("expired", "Your school did not decide your request for «Helper»"),
    ],
)
def test_the_decision_is_in_the_subject(decision: str, subject: str) -> None:
    parsed, _ = _built(ACCESS_REQUEST_DECIDED, client_name="Helper", decision=decision)
    assert parsed["Subject"] == subject
