"""The short form of a User-Agent header the connected-apps page names a sign-in by
(`web/user_agent.py`), from headers real browsers and clients send."""

from __future__ import annotations

import pytest

from courseschool.authz.web.user_agent import short_user_agent

CASES = [
    ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on Linux"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0", "Firefox on Windows"),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.5 Safari/605.1.15",
        "Safari on macOS",
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.5 Mobile/15E148 Safari/604.1",
        "Safari on iPhone",
    ),
    (
        "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1",
        "Chrome on iPad",
    ),
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36",
        "Chrome on Windows",
    ),
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
        "Edge on Windows",
    ),
    (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
        "Opera on Linux",
    ),
    (
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.6778.39 Mobile Safari/537.36",
        "Chrome on Android",
    ),
    (
        "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
        "SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
        "Samsung Internet on Android",
    ),
    (
        "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36",
        "Chrome on ChromeOS",
    ),
    (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/131.0.6778.139 Safari/537.36",
        "Chrome on Linux",
    ),
    (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chromium/130.0.6723.116 Chrome/130.0.6723.116 Safari/537.36",
        "Chromium on Linux",
    ),
    ("Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 SomethingNew/1.0", "A browser on Linux"),
    ("Mozilla/5.0 (compatible; SomeBot/2.1)", None),
    ("curl/8.5.0", "curl"),
    ("python-httpx/0.27.0", "python-httpx"),
    ("node", "node"),
    ("", None),
    (None, None),
    ("   ", None),
    ("\x1b[31mred/1.0", None),  # a terminal escape is not a product name
    ("evil\x1b[2J/1.0", "evil"),  # only the name's safe prefix is kept
    ("<script>alert(1)</script>", None),
    ("a" * 5000, "a" * 32),
]


@pytest.mark.parametrize(("header", "short"), CASES)
def test_a_user_agent_in_a_few_words(header: str | None, short: str | None) -> None:
    assert short_user_agent(header) == short


def test_a_long_header_is_read_only_at_its_start() -> None:
    padded = "Mozilla/5.0 (" + "x" * 2000 + "; Linux) Firefox/128.0"
    assert short_user_agent(padded) is None  # its tokens lie past what is read
    assert short_user_agent("Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0 " + "x" * 5000) == "Firefox on Linux"
