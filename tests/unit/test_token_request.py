"""The token request form (RFC 6749 §3.2) and client authentication (§2.3)."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.authz.protocol.models import Client
from courseschool.authz.protocol.token_request import (
    MAX_PARAM,
    TokenForm,
    authenticate_client,
    check_grant_type_allowed,
    parse_token_form,
    presented_credentials,
)
from courseschool.common.bearer import BasicCredentials
from courseschool.common.errors import InvalidClientError, InvalidRequestError, UnauthorizedClientError
from courseschool.common.secrets import digest

from .factories import InMemoryClients, make_client

SECRET = "correct-horse-battery-staple"

CLIENTS = InMemoryClients(
    make_client(client_id="public"),
    make_client(client_id="confidential", token_endpoint_auth_method="client_secret_post", secret_hash=digest(SECRET)),
    make_client(client_id="no-hash", token_endpoint_auth_method="client_secret_post", secret_hash=None),
    make_client(client_id="basic", token_endpoint_auth_method="client_secret_basic", secret_hash=digest(SECRET)),
    make_client(client_id="disabled-public", disabled=True),
    make_client(
        client_id="disabled-confidential",
        token_endpoint_auth_method="client_secret_post",
        secret_hash=digest(SECRET),
        disabled=True,
    ),
)


def test_full_form_is_parsed() -> None:
    form = parse_token_form(
        {
            "grant_type": ["authorization_code"],
            "client_id": ["c"],
            "client_secret": ["s"],
            "code": ["k"],
            "redirect_uri": ["http://127.0.0.1/cb"],
            "code_verifier": ["v"],
            "refresh_token": ["r"],
            "scope": ["openid"],
            "resource": ["http://127.0.0.1:8000"],
        }
    )
    assert form == TokenForm(
        grant_type="authorization_code",
        client_id="c",
        client_secret="s",
        code="k",
        redirect_uri="http://127.0.0.1/cb",
        code_verifier="v",
        refresh_token="r",
        scope="openid",
        resource=("http://127.0.0.1:8000",),
    )


@pytest.mark.parametrize(
    "name",
    ["grant_type", "client_id", "client_secret", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"],
)
def test_repeated_parameter_is_invalid_request(name: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        parse_token_form({name: ["a", "b"]})
    assert info.value.error == "invalid_request"
    assert name in info.value.description


@pytest.mark.parametrize("name", ["code", "client_secret", "grant_type"])
def test_over_long_parameter_is_invalid_request(name: str) -> None:
    parse_token_form({name: ["x" * MAX_PARAM]})
    with pytest.raises(InvalidRequestError):
        parse_token_form({name: ["x" * (MAX_PARAM + 1)]})


@pytest.mark.parametrize(
    ("form", "attr", "expected"),
    [
        ({"client_secret": [""]}, "client_secret", None),  # empty value = omitted
        ({"code": ["", "abc"]}, "code", "abc"),  # an empty repetition does not count
        ({"scope": ["", ""]}, "scope", None),
        ({"resource": ["", "http://a"]}, "resource", ("http://a",)),
        ({"resource": ["http://a", "http://b"]}, "resource", ("http://a", "http://b")),  # resource may repeat
        ({}, "resource", ()),
        ({"unknown": ["x", "y"]}, "grant_type", None),  # unknown parameters are ignored
    ],
)
def test_empty_values_are_omitted_and_resource_may_repeat(form: dict[str, list[str]], attr: str, expected: Any) -> None:
    assert getattr(parse_token_form(form), attr) == expected


async def authenticate(form: TokenForm, basic: BasicCredentials | None = None) -> Client:
    return await authenticate_client(presented_credentials(form, basic), CLIENTS)


async def test_public_client_authenticates_with_client_id_only() -> None:
    client = await authenticate(TokenForm(client_id="public"))
    assert client.client_id == "public"


async def test_confidential_client_with_correct_secret_passes() -> None:
    client = await authenticate(TokenForm(client_id="confidential", client_secret=SECRET))
    assert client.client_id == "confidential"
    assert client.secret_hash == digest(SECRET)


@pytest.mark.parametrize(
    "form",
    [
        TokenForm(),  # missing client_id
        TokenForm(client_id=""),
        TokenForm(client_secret=SECRET),
        TokenForm(client_id="unknown"),
        TokenForm(client_id="unknown", client_secret=SECRET),
        TokenForm(client_id="disabled-public"),
        TokenForm(client_id="disabled-confidential", client_secret=SECRET),
        TokenForm(client_id="public", client_secret="anything"),  # public client presenting a secret
        TokenForm(client_id="confidential"),  # no secret
        TokenForm(client_id="confidential", client_secret="wrong"),
        TokenForm(client_id="confidential", client_secret=SECRET + " "),
        TokenForm(client_id="confidential", client_secret=SECRET.upper()),
        TokenForm(client_id="no-hash", client_secret=SECRET),  # confidential without a stored hash
    ],
)
async def test_failed_client_authentication_is_invalid_client_401(form: TokenForm) -> None:
    with pytest.raises(InvalidClientError) as info:
        await authenticate(form)
    assert info.value.error == "invalid_client"
    assert info.value.status_code == 401


@pytest.mark.parametrize(
    ("grant_types", "grant_type", "allowed"),
    [
        (["authorization_code", "refresh_token"], "refresh_token", True),
        (["authorization_code"], "authorization_code", True),
        (["authorization_code"], "refresh_token", False),
        (["authorization_code", "refresh_token"], "client_credentials", False),
    ],
)
def test_grant_type_must_be_registered_for_the_client(grant_types: list[str], grant_type: str, allowed: bool) -> None:
    client = make_client(grant_types=grant_types)
    if allowed:
        check_grant_type_allowed(client, grant_type)
    else:
        with pytest.raises(UnauthorizedClientError) as info:
            check_grant_type_allowed(client, grant_type)
        assert info.value.error == "unauthorized_client"


async def test_basic_client_authenticates_with_the_header() -> None:
    client = await authenticate(TokenForm(), BasicCredentials("basic", SECRET))
    assert client.client_id == "basic"


async def test_public_client_id_alone_in_a_basic_header_is_none() -> None:
    client = await authenticate(TokenForm(), BasicCredentials("public", ""))
    assert client.client_id == "public"


@pytest.mark.parametrize(
    ("form", "basic", "why"),
    [
        (TokenForm(client_id="basic", client_secret=SECRET), None, "registered with client_secret_basic"),
        (TokenForm(), BasicCredentials("confidential", SECRET), "registered with client_secret_post"),
        (TokenForm(), BasicCredentials("public", "anything"), "registered with none"),
        (TokenForm(), BasicCredentials("basic", ""), "registered with client_secret_basic"),
        (TokenForm(), BasicCredentials("basic", "wrong"), "client_secret is not this client's"),
        (TokenForm(), BasicCredentials("unknown", SECRET), "register the client again"),
    ],
)
async def test_each_client_keeps_its_registered_method(
    form: TokenForm, basic: BasicCredentials | None, why: str
) -> None:
    with pytest.raises(InvalidClientError) as info:
        await authenticate(form, basic)
    assert why in info.value.description
    assert ("WWW-Authenticate" in info.value.headers) == (basic is not None)


@pytest.mark.parametrize(
    "form",
    [TokenForm(client_id="other"), TokenForm(client_secret=SECRET), TokenForm(client_id="basic", client_secret=SECRET)],
)
def test_two_identities_or_two_methods_are_invalid_request(form: TokenForm) -> None:
    with pytest.raises(InvalidRequestError):
        presented_credentials(form, BasicCredentials("basic", SECRET))
