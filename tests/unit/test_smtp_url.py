"""SMTP_URL says where mail leaves and how: STARTTLS (smtp://) or TLS (smtps://) with
credentials, or no TLS to this machine only (smtp+plain://, `make run`'s catcher); a
mistake is refused at start-up without echoing the URL (it may hold a password); MAIL_FROM
is one address and comes with it."""

from __future__ import annotations

import pytest

from courseschool.authz.mail.relay import Relay, parse_smtp_url
from courseschool.authz.settings import AuthzSettings
from courseschool.common.settings import SettingsError, load_settings


def test_the_schemes_and_their_defaults() -> None:
    assert parse_smtp_url("smtp://mailer:p%40ss@relay.example") == Relay(
        host="relay.example", port=587, security="starttls", username="mailer", password="p@ss"
    )
    assert parse_smtp_url("smtps://relay.example").port == 465
    assert parse_smtp_url("smtps://relay.example").security == "tls"
    assert parse_smtp_url("smtp+plain://127.0.0.1:1025") == Relay(host="127.0.0.1", port=1025, security="none")
    assert parse_smtp_url("smtp+plain://[::1]:1025").host == "::1"


@pytest.mark.parametrize(
    "url",
    [
        "http://relay.example",
        "smtp://",
        "smtp://relay.example/path",
        "smtp://relay.example?x=1",
        "smtp://mailer@relay.example",
        "smtp+plain://relay.example:25",
        "smtp+plain://10.0.0.5:25",
        "smtp+plain://mailer:secret-word@127.0.0.1:1025",
        "smtp://relay.example:99999",
    ],
)
def test_a_wrong_smtp_url_is_refused_without_echoing_it(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_smtp_url(url)
    assert "secret-word" not in str(refused.value) and "relay.example" not in str(refused.value)


def test_the_password_is_never_in_the_relays_repr() -> None:
    relay = parse_smtp_url("smtps://mailer:secret-word@relay.example")
    assert "secret-word" not in repr(relay) and "secret-word" not in str(relay)


def _settings(**values: str) -> AuthzSettings:
    return load_settings(AuthzSettings, environ={}, dev=True, **values)


def test_smtp_url_needs_mail_from() -> None:
    with pytest.raises(SettingsError, match="MAIL_FROM"):
        _settings(smtp_url="smtps://relay.example")
    ok = _settings(smtp_url="smtps://relay.example", mail_from="Course School <no-reply@school.example>")
    assert ok.smtp_url is not None


@pytest.mark.parametrize("mail_from", ["nobody", "a@b.example, c@d.example", "a@b.example\r\nBcc: c@d.example"])
def test_mail_from_is_one_address(mail_from: str) -> None:
    with pytest.raises(SettingsError, match=r"MAIL_FROM|linefeed"):
        _settings(smtp_url="smtps://relay.example", mail_from=mail_from)
