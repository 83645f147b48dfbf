"""The authorization request (RFC 6749 §4.1.1, PKCE, RFC 8707, OIDC §3.1.2.1), in its two
phases: nothing is redirected until client and redirect URI are trusted."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.authz.protocol.authorization import (
    AuthorizationError,
    UnsafeRequestError,
    validate_authorization_request,
)
from courseschool.common import errors

from .factories import InMemoryClients, make_client

RESOURCE = "http://127.0.0.1:8000"
OTHER_RESOURCE = "https://files.example.com/api"
KNOWN = frozenset({RESOURCE, OTHER_RESOURCE})
CB = "http://127.0.0.1:8080/callback"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

CLIENTS = InMemoryClients(
    make_client(client_id="client-1", redirect_uris=[CB, "https://app.example.com/cb"]),
    make_client(client_id="scoped", redirect_uris=[CB], scope="openid email courses:read"),
    make_client(client_id="gone", redirect_uris=[CB], disabled=True),
)


def params(**overrides: Any) -> dict[str, list[str]]:
    """A valid request; a keyword set to None removes it, a list repeats it."""
    base: dict[str, Any] = {
        "client_id": "client-1",
        "redirect_uri": CB,
        "response_type": "code",
        "scope": "openid courses:read",
        "state": "xyz",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
    }
    base.update(overrides)
    return {k: (v if isinstance(v, list) else [v]) for k, v in base.items() if v is not None}


async def validate(p: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    return await validate_authorization_request(p, CLIENTS, known_resources=KNOWN, default_resource=RESOURCE)


async def test_valid_request_is_accepted_with_defaults() -> None:
    client, req = await validate(params())
    assert client.client_id == "client-1"
    assert req.client_id == "client-1"
    assert req.redirect_uri == CB
    assert req.scope == ["openid", "courses:read"]
    assert req.state == "xyz"
    assert req.nonce is None
    assert req.code_challenge == CHALLENGE
    assert req.resource == RESOURCE  # defaults to the default resource
    assert req.prompt == frozenset()
    assert req.max_age is None
    assert req.login_hint is None


@pytest.mark.parametrize(
    "redirect_uri",
    ["http://127.0.0.1:51234/callback", "http://127.0.0.1/callback", "https://app.example.com/cb"],
)
async def test_registered_redirect_uri_or_loopback_port_variant_is_accepted(redirect_uri: str) -> None:
    _, req = await validate(params(redirect_uri=redirect_uri))
    assert req.redirect_uri == redirect_uri  # the URI actually used is kept for the token request


@pytest.mark.parametrize(
    "overrides",
    [
        {"client_id": None},
        {"client_id": ""},
        {"client_id": "x" * 513},
        {"client_id": "unknown"},
        {"client_id": "gone"},  # disabled
        {"client_id": ["client-1", "client-1"]},  # repeated
        {"redirect_uri": None},
        {"redirect_uri": ""},
        {"redirect_uri": ["http://127.0.0.1:8080/callback"] * 2},  # repeated
        {"redirect_uri": "http://127.0.0.1:8080/other"},  # unregistered path
        {"redirect_uri": "http://localhost:8080/callback"},  # unregistered host
        {"redirect_uri": "https://evil.example.com/cb"},
        {"redirect_uri": "https://app.example.com:443/cb"},  # non-loopback: exact match only
        {"redirect_uri": "http://127.0.0.1:8080/callback#x"},
    ],
)
async def test_untrusted_client_or_redirect_uri_is_unsafe_and_never_redirected(overrides: dict[str, Any]) -> None:
    with pytest.raises(UnsafeRequestError):
        await validate(params(**overrides))


async def test_unsafe_errors_win_over_later_errors() -> None:
    with pytest.raises(UnsafeRequestError):
        await validate(params(client_id="unknown", response_type="token", scope=None))


@pytest.mark.parametrize(
    ("overrides", "error_cls"),
    [
        ({"response_type": None}, errors.InvalidRequestError),
        ({"response_type": ""}, errors.InvalidRequestError),
        ({"response_type": "token"}, errors.UnsupportedResponseTypeError),
        ({"response_type": "code id_token"}, errors.UnsupportedResponseTypeError),
        ({"response_mode": "fragment"}, errors.InvalidRequestError),
        ({"response_mode": "form_post"}, errors.InvalidRequestError),
        ({"scope": "openid " + "courses:read " * 400}, errors.InvalidRequestError),  # too long
        ({"scope": "openid courses:admin"}, errors.InvalidScopeError),
        ({"scope": "offline_access courses:admin"}, errors.InvalidScopeError),  # ignored, the unknown one refused
        ({"code_challenge": None}, errors.InvalidRequestError),
        ({"code_challenge_method": None}, errors.InvalidRequestError),
        ({"code_challenge_method": "plain"}, errors.InvalidRequestError),
        ({"code_challenge_method": "plain", "code_challenge": "a" * 43}, errors.InvalidRequestError),
        ({"code_challenge": "too-short"}, errors.InvalidRequestError),
        ({"code_challenge": CHALLENGE[:-1] + "+"}, errors.InvalidRequestError),
        ({"resource": "https://unknown.example.com/api"}, errors.InvalidTargetError),
        ({"resource": "/api/v1"}, errors.InvalidTargetError),
        ({"resource": RESOURCE + "#frag"}, errors.InvalidTargetError),
        ({"resource": "ftp://127.0.0.1:8000"}, errors.InvalidTargetError),
        ({"resource": [RESOURCE, OTHER_RESOURCE]}, errors.InvalidTargetError),  # one resource per request
        ({"resource": [RESOURCE, "not a uri"]}, errors.InvalidTargetError),
        ({"scope": ["openid", "profile"]}, errors.InvalidRequestError),  # repeated
        ({"response_type": ["code", "code"]}, errors.InvalidRequestError),
        ({"nonce": ["a", "b"]}, errors.InvalidRequestError),
        ({"code_challenge": [CHALLENGE, CHALLENGE]}, errors.InvalidRequestError),
        ({"ui_locales": ["en", "fr"]}, errors.InvalidRequestError),  # RFC 6749 §3.1: even unused parameters
        ({"response_type": "token", "nonce": ["a", "b"]}, errors.InvalidRequestError),  # repetition checked first
        ({"prompt": "none login"}, errors.InvalidRequestError),
        ({"prompt": "none consent"}, errors.InvalidRequestError),
        ({"prompt": "bogus"}, errors.InvalidRequestError),
        ({"prompt": ""}, errors.InvalidRequestError),
        ({"request": "eyJhbGciOiJub25lIn0.e30."}, errors.RequestNotSupportedError),
        ({"request_uri": "https://app.example.com/req.jwt"}, errors.RequestUriNotSupportedError),
        ({"max_age": "abc"}, errors.InvalidRequestError),
        ({"max_age": "-1"}, errors.InvalidRequestError),
        ({"max_age": "1.5"}, errors.InvalidRequestError),
        ({"max_age": ""}, errors.InvalidRequestError),
        ({"max_age": "1" * 10}, errors.InvalidRequestError),
        ({"nonce": ""}, errors.InvalidRequestError),
        ({"nonce": "n" * 513}, errors.InvalidRequestError),
        ({"state": "s" * 2049}, errors.InvalidRequestError),
    ],
)
async def test_error_after_trust_is_redirected_with_the_right_code(
    overrides: dict[str, Any], error_cls: type[errors.OAuthError]
) -> None:
    p = params(**overrides)
    with pytest.raises(AuthorizationError) as info:
        await validate(p)
    err = info.value
    assert type(err.error) is error_cls
    assert err.error.error == error_cls.error
    assert err.redirect_uri == CB
    assert err.state == p["state"][0]


@pytest.mark.parametrize("state", ["xyz", "a b&c=d", None])
async def test_redirected_error_echoes_state(state: str | None) -> None:
    with pytest.raises(AuthorizationError) as info:
        await validate(params(state=state, response_type="token"))
    assert info.value.state == state
    assert info.value.error.error == "unsupported_response_type"


async def test_repeated_state_is_invalid_request_without_state() -> None:
    with pytest.raises(AuthorizationError) as info:
        await validate(params(state=["a", "b"]))
    assert info.value.error.error == "invalid_request"
    assert info.value.state is None


async def test_error_goes_to_the_redirect_uri_actually_used() -> None:
    used = "http://127.0.0.1:51234/callback"
    with pytest.raises(AuthorizationError) as info:
        await validate(params(redirect_uri=used, scope="nope:read"))
    assert info.value.redirect_uri == used
    assert info.value.error.error == "invalid_scope"


@pytest.mark.parametrize("max_age", ["²", "①"])
async def test_unicode_digit_max_age_is_invalid_request(max_age: str) -> None:
    with pytest.raises(AuthorizationError) as info:
        await validate(params(max_age=max_age))
    assert info.value.error.error == "invalid_request"


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        ([RESOURCE], RESOURCE),
        (["HTTP://127.0.0.1:8000/"], RESOURCE),  # canonicalised
        ([RESOURCE, RESOURCE + "/"], RESOURCE),  # repeated spellings of one resource
        (["HTTPS://Files.Example.com:443/api/"], OTHER_RESOURCE),
    ],
)
async def test_resource_is_canonicalised_and_may_repeat_when_equal(resource: list[str], expected: str) -> None:
    _, req = await validate(params(resource=resource))
    assert req.resource == expected


@pytest.mark.parametrize(
    ("overrides", "attr", "expected"),
    [
        ({"scope": "courses:read openid courses:read"}, "scope", ["courses:read", "openid"]),
        ({"nonce": "n-0S6_WzA2Mj"}, "nonce", "n-0S6_WzA2Mj"),
        ({"prompt": "login consent"}, "prompt", frozenset({"login", "consent"})),
        ({"prompt": "none"}, "prompt", frozenset({"none"})),
        ({"max_age": "0"}, "max_age", 0),
        ({"max_age": "3600"}, "max_age", 3600),
        ({"login_hint": "ada@example.com"}, "login_hint", "ada@example.com"),
        ({"login_hint": ""}, "login_hint", None),
        ({"response_mode": "query"}, "state", "xyz"),
        ({"state": None}, "state", None),
        ({"unknown_param": "ignored"}, "client_id", "client-1"),
    ],
)
async def test_optional_parameters_are_parsed(overrides: dict[str, Any], attr: str, expected: Any) -> None:
    _, req = await validate(params(**overrides))
    assert getattr(req, attr) == expected


@pytest.mark.parametrize("omitted", [None, "", "   "])
async def test_missing_scope_asks_for_the_documented_default(omitted: str | None) -> None:
    """RFC 6749 §3.3: a request without scope uses a pre-defined default (the MCP
    conformance suite's authorization-code scenario sends none)."""
    _, req = await validate(params(scope=omitted))
    assert req.scope[:2] == ["openid", "profile"]
    assert "courses:read" in req.scope and "account:read" in req.scope
    assert not [s for s in req.scope if s.endswith(":write")]  # reading only, never a write by default


async def test_missing_scope_asks_for_the_clients_registered_scope() -> None:
    _, req = await validate(params(client_id="scoped", scope=None))
    assert req.scope == ["openid", "email", "courses:read"]


@pytest.mark.parametrize(
    ("scope", "asked"),
    [
        ("openid offline_access courses:read", ["openid", "courses:read"]),
        ("offline_access openid", ["openid"]),
    ],
)
async def test_offline_access_is_accepted_and_ignored(scope: str, asked: list[str]) -> None:
    """RFC 6749 §3.3 lets the server ignore a scope; generic OpenID Connect clients add
    offline_access by habit, and refresh tokens go to every refresh-grant client anyway."""
    _, req = await validate(params(scope=scope))
    assert req.scope == asked


async def test_offline_access_alone_asks_for_the_default() -> None:
    _, only = await validate(params(client_id="scoped", scope="offline_access"))
    _, none = await validate(params(client_id="scoped", scope=None))
    assert only.scope == none.scope == ["openid", "email", "courses:read"]
