"""Redirect URIs of native clients: RFC 8252 §7.3 loopback rules, RFC 6749 §3.1.2."""

from __future__ import annotations

import pytest

from courseschool.authz.protocol.redirect_uris import (
    MAX_REDIRECT_URI_LENGTH,
    describe_redirect_host,
    find_redirect_uri,
    is_https_redirect_uri,
    is_loopback_redirect_uri,
    redirect_uri_matches,
)

LOOPBACK_ACCEPTED = [
    "http://127.0.0.1/cb",
    "http://127.0.0.1:8080/callback",
    "http://[::1]:5000/cb",
    "http://[::1]/cb",
    "http://localhost:3000/callback",
    "http://localhost/callback",
    "http://127.0.0.1",  # no path
    "http://localhost:3000",  # port, no path
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/cb?x=1",  # query is allowed
    "http://localhost/cb?a=1&b=2",
    "http://127.0.0.1:65535/a/b/c",
    "http://LOCALHOST:3000/callback",  # host is case-insensitive
]


@pytest.mark.parametrize("uri", LOOPBACK_ACCEPTED)
def test_http_loopback_redirect_uri_is_accepted(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is True


@pytest.mark.parametrize(
    "uri",
    [
        "https://example.com/cb",  # fixed https callback: integrations only
        "https://127.0.0.1/cb",  # https even on loopback is not the native form
        "http://example.com/cb",  # non-loopback http
        "http://127.0.0.2/cb",  # only 127.0.0.1 counts, not the whole 127/8
        "http://127.0.0.1.evil.com/cb",
        "http://localhost.evil.com/cb",
        "http://0x7f000001/cb",
        "http://[0:0:0:0:0:0:0:1]/cb",  # only the literal spelling [::1]
        "http://localhost./cb",
    ],
)
def test_non_loopback_or_non_http_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize(
    "uri",
    ["com.app:/cb", "com.example.app://callback", "myapp://127.0.0.1/cb", "javascript:alert(1)", "ftp://127.0.0.1/cb"],
)
def test_custom_scheme_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize(
    "uri", ["http://127.0.0.1/cb#frag", "http://127.0.0.1/cb#", "http://localhost:3000/#/callback", "http://[::1]/cb#x"]
)
def test_fragment_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize(
    "uri",
    [
        "http://user@127.0.0.1/cb",
        "http://user:pw@localhost:3000/cb",
        "http://:pw@127.0.0.1/cb",
        "http://evil.com@127.0.0.1/cb",
        "http://127.0.0.1@evil.com/cb",
        "http://127.0.0.1\\@evil.com/cb",
    ],
)
def test_user_info_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:abc/cb",
        "http://127.0.0.1:99999/cb",
        "http://127.0.0.1:-1/cb",
        "http://127.0.0.1:+1/cb",
        "http://127.0.0.1:8080:90/cb",
        "http://[::1/cb",
        "http://localhost:0x50/cb",
    ],
)
def test_malformed_port_or_host_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize("uri", ["http://[::1]evil.com/cb", "http://[::1]abc/cb"])
def test_junk_after_ipv6_literal_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize(
    "uri",
    [
        " http://127.0.0.1/cb",
        "http://127.0.0.1/cb ",
        "http://127.0.0.1/c b",
        "http://127.0.0.1/cb\n",
        "http://127.0.0.1/cb\r\nSet-Cookie: x=1",
        "http://127.0.0.1/c\tb",
        "http://127.0.0.1/c\x00b",
        "http://127.0.0.1/c\x7fb",
        "http://127.0.0.1/c\x1bb",
    ],
)
def test_ascii_whitespace_or_control_character_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize("uri", ["http://127.0.0.1/c\x85b", "http://127.0.0.1/c\u00a0b", "http://127.0.0.1/c\u2028b"])
def test_non_ascii_whitespace_or_control_character_redirect_uri_is_refused(uri: str) -> None:
    assert is_loopback_redirect_uri(uri) is False


@pytest.mark.parametrize("uri", ["", None, 42, b"http://127.0.0.1/cb"])
def test_empty_or_non_string_redirect_uri_is_refused(uri: object) -> None:
    assert is_loopback_redirect_uri(uri) is False  # type: ignore[arg-type]


def _of_length(n: int) -> str:
    base = "http://127.0.0.1/"
    return base + "a" * (n - len(base))


@pytest.mark.parametrize(
    ("length", "accepted"),
    [(MAX_REDIRECT_URI_LENGTH, True), (MAX_REDIRECT_URI_LENGTH + 1, False), (10_000, False)],
)
def test_over_long_redirect_uri_is_refused(length: int, accepted: bool) -> None:
    uri = _of_length(length)
    assert len(uri) == length
    assert is_loopback_redirect_uri(uri) is accepted


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("https://app.example.com/cb", True),
        ("https://app.example.com:8443/oauth/cb?x=1", True),
        ("http://app.example.com/cb", False),
        ("https://app.example.com/cb#f", False),
        ("https://user@app.example.com/cb", False),
        ("https:///cb", False),
        ("https://app.example.com:99999/cb", False),
    ],
)
def test_https_integration_callback_rules(uri: str, expected: bool) -> None:
    assert is_https_redirect_uri(uri) is expected


@pytest.mark.parametrize(
    ("requested", "registered"),
    [
        ("http://127.0.0.1:8080/callback", "http://127.0.0.1:8080/callback"),
        ("https://app.example.com/cb", "https://app.example.com/cb"),
        ("http://127.0.0.1:51234/callback", "http://127.0.0.1:8080/callback"),
        ("http://127.0.0.1:51234/callback", "http://127.0.0.1/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:8080/callback"),
        ("http://[::1]:6000/cb", "http://[::1]:5000/cb"),
        ("http://localhost:4000/callback", "http://localhost:3000/callback"),
        ("http://localhost:4000/cb?x=1", "http://localhost:3000/cb?x=1"),
        ("http://127.0.0.1:80/callback", "http://127.0.0.1/callback"),  # a port, even the default one
        ("http://127.0.0.1:65535", "http://127.0.0.1"),  # no path on either side
        ("http://LOCALHOST:4000/cb", "http://LOCALHOST:3000/cb"),  # as the registered string spells it
        ("http://127.0.0.1:4000/c%41b", "http://127.0.0.1:3000/c%41b"),
    ],
)
def test_exact_match_or_loopback_port_difference_matches(requested: str, registered: str) -> None:
    assert redirect_uri_matches(requested, registered) is True


@pytest.mark.parametrize(
    ("requested", "registered"),
    [
        # loopback: only the port may differ
        ("http://localhost:3000/callback", "http://127.0.0.1:3000/callback"),  # host
        ("http://[::1]:3000/callback", "http://127.0.0.1:3000/callback"),  # host
        ("http://127.0.0.1:3000/other", "http://127.0.0.1:3000/callback"),  # path
        ("http://127.0.0.1:3000/callback/", "http://127.0.0.1:3000/callback"),  # trailing slash
        ("http://127.0.0.1:3000/Callback", "http://127.0.0.1:3000/callback"),  # path case
        ("http://127.0.0.1:3000/callback?x=2", "http://127.0.0.1:3000/callback?x=1"),  # query
        ("http://127.0.0.1:3000/callback?x=1", "http://127.0.0.1:3000/callback"),  # added query
        ("https://127.0.0.1:3000/callback", "http://127.0.0.1:3000/callback"),  # scheme
        ("http://127.0.0.1:3000/callback#x", "http://127.0.0.1:3000/callback"),  # fragment
        ("http://user@127.0.0.1:3000/callback", "http://127.0.0.1:3000/callback"),  # user-info
        # loopback: no normalisation before comparing (RFC 9700 §4.1.3)
        ("HTTP://127.0.0.1:3000/callback", "http://127.0.0.1:3000/callback"),  # scheme case
        ("Http://127.0.0.1:4000/callback", "http://127.0.0.1:3000/callback"),  # scheme case, other port
        ("http://127.0.0.1:3000/callback", "HTTP://127.0.0.1:3000/callback"),  # registered in capitals
        ("http://LOCALHOST:3000/callback", "http://localhost:3000/callback"),  # host case
        ("http://LocalHost:4000/callback", "http://localhost:3000/callback"),  # host case, other port
        ("http://localhost:4000/callback", "http://LOCALHOST:3000/callback"),  # host case, other way
        ("http://127.0.0.1:3000/%63allback", "http://127.0.0.1:3000/callback"),  # percent-encoded letter
        ("http://127.0.0.1:3000/call%2Fback", "http://127.0.0.1:3000/call/back"),  # encoded slash
        ("http://127.0.0.1:3000/c%4Ab", "http://127.0.0.1:3000/c%4ab"),  # hex digits case
        ("http://127.0.0.1:3000/callback?x=%31", "http://127.0.0.1:3000/callback?x=1"),  # encoded query
        ("http://127.0.0.1:/callback", "http://127.0.0.1/callback"),  # empty port
        ("http://127.0.0.1:/callback", "http://127.0.0.1:3000/callback"),  # empty port
        ("http://127.0.0.1:03000/callback", "http://127.0.0.1:3000/callback"),  # leading zero
        ("http://127.0.0.1:0/callback", "http://127.0.0.1:3000/callback"),  # port 0
        ("http://localhost.:3000/callback", "http://localhost:3000/callback"),  # trailing dot
        ("http://127.0.0.1.:3000/callback", "http://127.0.0.1:3000/callback"),  # trailing dot
        ("http://127.0.0.1:3000/callback.", "http://127.0.0.1:3000/callback"),  # trailing dot in path
        ("http://@127.0.0.1:3000/callback", "http://127.0.0.1:3000/callback"),  # empty user-info
        ("http://127.0.0.1:3000/./callback", "http://127.0.0.1:3000/callback"),  # dot segment
        ("http://127.0.0.1:3000//callback", "http://127.0.0.1:3000/callback"),  # doubled slash
        ("http://127.0.0.1:3000/callback?", "http://127.0.0.1:3000/callback"),  # empty query
        ("http://127.0.0.1:3000/", "http://127.0.0.1:3000"),  # added root path
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000/"),  # removed root path
        # non-loopback: exact string only
        ("https://app.example.com:443/cb", "https://app.example.com/cb"),
        ("https://app.example.com:8443/cb", "https://app.example.com/cb"),
        ("https://APP.example.com/cb", "https://app.example.com/cb"),
        ("HTTPS://app.example.com/cb", "https://app.example.com/cb"),
        ("https://app.example.com./cb", "https://app.example.com/cb"),
        ("https://app.example.com:/cb", "https://app.example.com/cb"),
        ("https://app.example.com/%63b", "https://app.example.com/cb"),
        ("https://app.example.com/cb/", "https://app.example.com/cb"),
        ("http://example.com:81/cb", "http://example.com:80/cb"),
        ("http://127.0.0.1:3000/callback", "https://app.example.com/callback"),
    ],
)
def test_anything_but_a_loopback_port_difference_does_not_match(requested: str, registered: str) -> None:
    assert redirect_uri_matches(requested, registered) is False


@pytest.mark.parametrize(
    ("requested", "registered", "expected"),
    [
        ("http://127.0.0.1:9999/cb", ["https://app.example.com/cb", "http://127.0.0.1/cb"], True),
        ("https://app.example.com/cb", ["https://app.example.com/cb"], True),
        ("http://127.0.0.1:9999/cb", ["http://localhost/cb", "http://127.0.0.1/other"], False),
        ("http://127.0.0.1/cb", [], False),
    ],
)
def test_find_redirect_uri_matches_any_registered_uri(requested: str, registered: list[str], expected: bool) -> None:
    assert find_redirect_uri(requested, registered) is expected


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://127.0.0.1:8080/callback", "an app on this computer (port 8080)"),
        ("http://[::1]/cb", "an app on this computer"),
        ("http://localhost:3000/callback", "an app on this computer (port 3000)"),
        ("https://app.example.com/cb", "app.example.com"),
        ("https://App.Example.com:8443/cb", "app.example.com"),
        ("com.app:/cb", "com.app:/cb"),  # no host: the URI itself
    ],
)
def test_describe_redirect_host_names_where_the_code_goes(uri: str, expected: str) -> None:
    assert describe_redirect_host(uri) == expected
