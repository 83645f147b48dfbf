"""Resource indicators, RFC 8707 §2: canonical form and refusals."""

from __future__ import annotations

import pytest

from courseschool.common.resource import canonical_resource


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),  # trailing slash stripped
        ("HTTP://Example.COM/", "http://example.com"),  # scheme and host lower-cased
        ("HTTPS://API.Example.com/v1/", "https://api.example.com/v1"),
        ("http://example.com:80/", "http://example.com"),  # default http port stripped
        ("https://example.com:443/api", "https://example.com/api"),  # default https port stripped
        ("http://example.com:443/api", "http://example.com:443/api"),  # 443 is not http's default
        ("https://example.com:80/api", "https://example.com:80/api"),
        ("https://example.com:8443/api/", "https://example.com:8443/api"),  # non-default port kept
        ("https://example.com/API/Path", "https://example.com/API/Path"),  # path case kept
        ("http://[::1]:80/", "http://[::1]"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("https://example.com/a?x=1", "https://example.com/a?x=1"),  # query kept
    ],
)
def test_canonical_resource_normalises_scheme_host_port_and_slash(value: str, expected: str) -> None:
    assert canonical_resource(value) == expected


@pytest.mark.parametrize(
    "value",
    ["http://127.0.0.1:8000", "HTTP://127.0.0.1:8000/", "http://127.0.0.1:8000//"],
)
def test_spellings_of_one_resource_canonicalise_equal(value: str) -> None:
    assert canonical_resource(value) == "http://127.0.0.1:8000"


def test_canonical_resource_is_idempotent() -> None:
    once = canonical_resource("HTTPS://Example.com:443/api/")
    assert once is not None
    assert canonical_resource(once) == once


@pytest.mark.parametrize(
    "value",
    [
        "https://example.com/api#frag",  # fragment
        "https://example.com/api#",  # empty fragment
        "/api/v1",  # relative
        "example.com/api",  # relative (no scheme)
        "//example.com/api",  # scheme-relative
        "ftp://example.com/",  # non-http scheme
        "urn:ietf:params:oauth:x",
        "file:///etc/passwd",
        "https://user@example.com/",  # userinfo
        "https://user:pw@example.com/",
        "https://:pw@example.com/",
        "",  # empty
        " ",
        "https://example.com/a b",  # whitespace
        " https://example.com/",
        "https://example.com/\n",
        "https://example.com/\t",
        "https:///path",  # no host
        "https://example.com:abc/",  # malformed port
        "https://example.com:99999/",
        "https://[::1/",
    ],
)
def test_malformed_resource_is_refused(value: str) -> None:
    assert canonical_resource(value) is None


@pytest.mark.parametrize(
    "value", ["https://example.com/a\x00", "https://example.com/a\x1b", "https://example.com/\x7f"]
)
def test_control_character_resource_is_refused(value: str) -> None:
    assert canonical_resource(value) is None


def test_insufficient_scope_names_every_scope_the_operation_needs() -> None:
    from courseschool.resource_api.web.principal import _insufficient

    one = _insufficient(("courses:write",))
    assert one.scope == "courses:write" and one.description == "this operation needs the courses:write scope"
    several = _insufficient(("courses:read", "courses:write"))
    assert several.scope == "courses:read courses:write"
    assert several.body()["scope"] == "courses:read courses:write"
