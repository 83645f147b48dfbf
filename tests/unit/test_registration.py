"""Dynamic client registration, RFC 7591 §2 and §3.2, as the interface narrows it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from courseschool.authz.protocol.registration import (
    MAX_REDIRECT_URIS,
    ClientMetadata,
    parse_metadata,
    registration_response,
)
from courseschool.common.errors import InvalidClientMetadataError, InvalidRedirectUriError

CB = "http://127.0.0.1:8080/callback"


def body(**members: Any) -> bytes:
    return json.dumps({"redirect_uris": [CB], **members}).encode()


def test_minimal_metadata_gets_the_defaults() -> None:
    meta = parse_metadata(json.dumps({"redirect_uris": [CB]}).encode())
    assert meta.redirect_uris == [CB]
    assert meta.application_type == "native"
    assert meta.token_endpoint_auth_method == "none"
    assert meta.grant_types == ["authorization_code", "refresh_token"]
    assert meta.response_types == ["code"]
    assert meta.id_token_signed_response_alg == "RS256"
    assert meta.client_name is None
    assert meta.scope is None


@pytest.mark.parametrize(
    "uris",
    [
        [CB],
        ["http://localhost:3000/callback"],
        ["http://[::1]:5000/cb", "http://127.0.0.1/cb", "http://localhost/cb?x=1"],
        ["http://127.0.0.1"],
    ],
)
def test_loopback_redirect_uris_are_accepted(uris: list[str]) -> None:
    assert parse_metadata(json.dumps({"redirect_uris": uris}).encode()).redirect_uris == uris


@pytest.mark.parametrize(
    "payload",
    [
        {},  # no redirect_uris
        {"redirect_uris": None},
        {"redirect_uris": []},
        {"redirect_uris": ["https://app.example.com/callback"]},  # fixed https callback
        {"redirect_uris": ["http://app.example.com/callback"]},  # non-loopback http
        {"redirect_uris": ["com.example.app:/callback"]},  # custom scheme
        {"redirect_uris": ["http://127.0.0.1/cb#frag"]},  # fragment
        {"redirect_uris": ["http://user@127.0.0.1/cb"]},  # user-info
        {"redirect_uris": [CB, "https://app.example.com/callback"]},  # mixed list refused whole
        {"redirect_uris": ["https://app.example.com/callback", CB]},
        {"redirect_uris": [""]},
        {"redirect_uris": [f"http://127.0.0.1/cb{i}" for i in range(MAX_REDIRECT_URIS + 1)]},
    ],
)
def test_bad_redirect_uris_are_invalid_redirect_uri(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidRedirectUriError) as info:
        parse_metadata(json.dumps(payload).encode())
    assert info.value.error == "invalid_redirect_uri"
    assert info.value.status_code == 400


def test_up_to_the_maximum_number_of_redirect_uris_is_accepted() -> None:
    uris = [f"http://127.0.0.1/cb{i}" for i in range(MAX_REDIRECT_URIS)]
    assert parse_metadata(json.dumps({"redirect_uris": uris}).encode()).redirect_uris == uris


def test_redirect_uri_is_checked_before_other_metadata() -> None:
    payload = {"redirect_uris": ["https://app.example.com/cb"], "token_endpoint_auth_method": "private_key_jwt"}
    with pytest.raises(InvalidRedirectUriError):
        parse_metadata(json.dumps(payload).encode())


@pytest.mark.parametrize(
    "members",
    [
        {"token_endpoint_auth_method": "private_key_jwt"},
        {"token_endpoint_auth_method": "client_secret_jwt"},
        {"token_endpoint_auth_method": ""},
        {"grant_types": ["implicit"]},
        {"grant_types": ["client_credentials"]},
        {"grant_types": ["authorization_code", "password"]},
        {"grant_types": ["refresh_token"]},  # authorization_code is required
        {"grant_types": []},
        {"response_types": ["token"]},
        {"response_types": ["code", "token"]},
        {"response_types": ["code id_token"]},
        {"response_types": []},
        {"application_type": "web"},
        {"application_type": "browser"},
        {"scope": "openid courses:admin"},  # unknown scope
        {"scope": "offline_access courses:admin"},  # offline_access ignored, the unknown one refused
        {"scope": ""},
        {"scope": "   "},
        {"id_token_signed_response_alg": "none"},
        {"id_token_signed_response_alg": "HS256"},
        {"id_token_signed_response_alg": "PS256"},
        {"client_name": ""},
        {"client_name": "x" * 201},
        # wrong types
        {"redirect_uris": CB},
        {"redirect_uris": [123]},
        {"grant_types": "authorization_code"},
        {"token_endpoint_auth_method": 1},
        {"scope": ["openid"]},
        {"client_name": 7},
        {"dpop_bound_access_tokens": "true"},
    ],
)
def test_bad_metadata_is_invalid_client_metadata(members: dict[str, Any]) -> None:
    with pytest.raises(InvalidClientMetadataError) as info:
        parse_metadata(body(**members))
    assert info.value.error == "invalid_client_metadata"
    assert info.value.status_code == 400


@pytest.mark.parametrize("raw", [b"", b"not json", b"{", b"[]", b"null", b'"x"', b"42", b"\xff\xfe"])
def test_non_json_object_body_is_invalid_client_metadata(raw: bytes) -> None:
    with pytest.raises(InvalidClientMetadataError) as info:
        parse_metadata(raw)
    assert info.value.error == "invalid_client_metadata"


@pytest.mark.parametrize(
    ("members", "attr", "expected"),
    [
        ({"token_endpoint_auth_method": "client_secret_post"}, "token_endpoint_auth_method", "client_secret_post"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "token_endpoint_auth_method", "client_secret_basic"),
        (
            {"grant_types": ["refresh_token", "authorization_code"]},
            "grant_types",
            ["authorization_code", "refresh_token"],
        ),
        ({"grant_types": ["authorization_code"]}, "grant_types", ["authorization_code"]),
        ({"id_token_signed_response_alg": "ES256"}, "id_token_signed_response_alg", "ES256"),
        ({"scope": "courses:read openid openid"}, "scope", "openid courses:read"),  # normalised
        ({"scope": "openid offline_access courses:read"}, "scope", "openid courses:read"),  # ignored, not refused
        ({"scope": "offline_access"}, "scope", None),  # only what is ignored: no default of its own
        ({"client_name": "My App"}, "client_name", "My App"),
        ({"client_name": "x" * 200}, "client_name", "x" * 200),
        ({"software_id": "ignored", "logo_uri": "https://x"}, "application_type", "native"),  # unknown members ignored
    ],
)
def test_accepted_metadata_is_kept_and_normalised(members: dict[str, Any], attr: str, expected: Any) -> None:
    assert getattr(parse_metadata(body(**members)), attr) == expected


def _meta(**kw: Any) -> ClientMetadata:
    return parse_metadata(body(**kw))


def test_registration_response_for_public_client_has_no_secret() -> None:
    out = registration_response(_meta(), client_id="cid", issued_at=1700, secret=None)
    assert out["client_id"] == "cid"
    assert out["client_id_issued_at"] == 1700
    assert out["redirect_uris"] == [CB]
    assert out["token_endpoint_auth_method"] == "none"
    assert out["grant_types"] == ["authorization_code", "refresh_token"]
    assert out["response_types"] == ["code"]
    assert out["application_type"] == "native"
    assert out["id_token_signed_response_alg"] == "RS256"
    assert "client_secret" not in out
    assert "client_secret_expires_at" not in out
    assert "client_name" not in out and "scope" not in out


def test_registration_response_for_secret_client_carries_secret_and_expiry() -> None:
    meta = _meta(token_endpoint_auth_method="client_secret_post", client_name="App", scope="openid")
    out = registration_response(meta, client_id="cid", issued_at=1700, secret="s3cr3t")
    assert out["client_secret"] == "s3cr3t"
    assert out["client_secret_expires_at"] == 0
    assert out["token_endpoint_auth_method"] == "client_secret_post"
    assert out["client_name"] == "App"
    assert out["scope"] == "openid"
