"""Issue 38, item 10: `run`'s banner says where security events go, the webhook's
receiver by its origin only (a hook URL's path or query often holds the receiver's own
secret), or that none is set."""

from __future__ import annotations

from pathlib import Path

from courseschool.platform.mail_catcher import MailCatcher
from courseschool.platform.run import PlatformSettings, _banner


def _webhook_line(tmp_path: Path, **settings: str) -> str:
    banner = _banner(PlatformSettings(**settings), "t" * 43, {}, MailCatcher(tmp_path))
    (line,) = [line for line in banner.splitlines() if line.startswith("  Webhook: ")]
    return line


def test_the_banner_names_the_receiver_and_hides_its_path(tmp_path: Path) -> None:
    line = _webhook_line(tmp_path, events_webhook_url="https://hooks.example.org:8443/T0/B1/secret-part?key=k")
    assert line == "  Webhook: security events and new connections to https://hooks.example.org:8443/… (signed)"


def test_the_banner_says_when_no_webhook_is_set(tmp_path: Path) -> None:
    assert "none (EVENTS_WEBHOOK_URL unset" in _webhook_line(tmp_path)
