"""What the user may grant (role cap, an integration's registered scope) and when a login
session may be reused (OIDC Core §3.1.2.1 prompt and max_age)."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.authz.protocol.authorization import AuthorizationRequest
from courseschool.authz.protocol.consent import (
    approved_scope,
    consent_can_be_remembered,
    grantable,
    offer,
    session_usable,
)
from courseschool.common.scopes import ALL_SCOPE_NAMES

from .factories import make_client


@pytest.mark.parametrize(
    ("requested", "role", "client_scope", "granted", "dropped"),
    [
        # a self-registered client's registered scope is a default, not a ceiling
        (
            ["openid", "courses:read", "courses:write"],
            "owner",
            "openid courses:read",
            ["openid", "courses:read", "courses:write"],
            [],
        ),
        # owner/admin: everything
        (["openid", "school:write"], "owner", None, ["openid", "school:write"], []),
        (list(ALL_SCOPE_NAMES), "admin", None, list(ALL_SCOPE_NAMES), []),
        # lecturer: reads + teaching writes, others dropped
        (
            ["courses:write", "school:write", "students:read"],
            "lecturer",
            None,
            ["courses:write", "students:read"],
            ["school:write"],
        ),
        (
            ["storage:write", "posts:write", "events:write", "curriculum:write"],
            "lecturer",
            None,
            ["curriculum:write", "events:write", "posts:write"],
            ["storage:write"],
        ),
        # student: identity and own account
        (
            ["openid", "profile", "email", "account:read", "account:write", "courses:read"],
            "student",
            None,
            ["openid", "profile", "email", "account:read", "account:write"],
            ["courses:read"],
        ),
        (["courses:write"], "student", None, [], ["courses:write"]),
        # unknown role: nothing
        (["openid"], "janitor", None, [], ["openid"]),
        (["openid", "courses:write"], "student", "courses:write openid", ["openid"], ["courses:write"]),
        # order is the registry's, not the request's
        (["courses:read", "email", "openid"], "owner", None, ["openid", "email", "courses:read"], []),
        (["school:write", "coupons:write", "openid"], "student", None, ["openid"], ["school:write", "coupons:write"]),
    ],
)
def test_grantable_caps_by_role_and_client_scope_in_registry_order(
    requested: list[str], role: str, client_scope: str | None, granted: list[str], dropped: list[str]
) -> None:
    got_granted, got_dropped = grantable(requested, role=role, client=make_client(scope=client_scope))
    assert got_granted == granted
    assert got_dropped == dropped


@pytest.mark.parametrize(
    ("requested", "role", "client_scope", "granted", "dropped"),
    [
        # an integration's registered scope is a ceiling, under the role's
        (
            ["openid", "courses:read", "courses:write"],
            "owner",
            "openid courses:read",
            ["openid", "courses:read"],
            ["courses:write"],
        ),
        (["openid", "courses:write"], "student", "courses:write openid", ["openid"], ["courses:write"]),
        (["openid", "school:write"], "owner", None, ["openid", "school:write"], []),  # none registered: no ceiling
    ],
)
def test_an_integrations_registered_scope_is_its_ceiling(
    requested: list[str], role: str, client_scope: str | None, granted: list[str], dropped: list[str]
) -> None:
    integration = make_client(scope=client_scope, is_integration=True, token_endpoint_auth_method="client_secret_post")
    assert grantable(requested, role=role, client=integration) == (granted, dropped)


def test_grantable_dedupes_repeated_names() -> None:
    granted, dropped = grantable(
        ["openid", "openid", "school:write", "school:write"], role="student", client=make_client()
    )
    assert (granted, dropped) == (["openid"], ["school:write"])


def test_offer_tells_apart_beyond_the_registration_and_beyond_the_role() -> None:
    client = make_client(
        scope="openid courses:read courses:write", is_integration=True, token_endpoint_auth_method="client_secret_post"
    )
    got = offer(["courses:write", "school:write", "openid", "courses:read"], role="lecturer", client=client)
    assert got.granted == ["openid", "courses:read", "courses:write"]
    assert got.beyond_registration == ["school:write"]  # not the role's doing: the integration was never given it
    assert got.beyond_role == []
    student = offer(["courses:write", "school:write", "openid"], role="student", client=client)
    assert (student.granted, student.beyond_registration, student.beyond_role) == (
        ["openid"],
        ["school:write"],
        ["courses:write"],
    )


def test_a_self_registered_client_asking_beyond_its_registration_is_offered_it() -> None:
    """The MCP SDKs register with the scope they chose first and step up after a 403
    insufficient_scope: the registration is a default, so the wider request is offered."""
    client = make_client(scope="openid courses:read")
    got = offer(["openid", "courses:read", "courses:write"], role="owner", client=client)
    assert (got.granted, got.beyond_registration, got.beyond_role) == (
        ["openid", "courses:read", "courses:write"],
        [],
        [],
    )


@pytest.mark.parametrize(
    ("shown", "grantable_now", "kept", "granted"),
    [
        # the page's scopes, all still grantable, nothing unticked
        (["openid", "courses:read"], ["openid", "courses:read"], None, ["openid", "courses:read"]),
        # grantable widened after the page (RFC 7592 PUT, a role raised): never beyond the page
        (["openid"], ["openid", "school:write", "members:write"], None, ["openid"]),
        # narrowed after the page (a role lowered): only what is still grantable
        (["openid", "courses:write"], ["openid"], None, ["openid"]),
        # unticked on the page
        (
            ["openid", "courses:read", "courses:write"],
            ["openid", "courses:read", "courses:write"],
            ["courses:read"],
            ["courses:read"],
        ),
        # a kept scope the page never showed grants nothing more
        (["openid"], ["openid", "school:write"], ["openid", "school:write"], ["openid"]),
        # the page never shown: nothing
        (None, ["openid", "courses:read"], None, []),
    ],
)
def test_an_approval_grants_at_most_what_its_page_showed(
    shown: list[str] | None, grantable_now: list[str], kept: list[str] | None, granted: list[str]
) -> None:
    assert approved_scope(shown, grantable_now, kept) == granted


def request(**kw: Any) -> AuthorizationRequest:
    fields: dict[str, Any] = {
        "client_id": "client-1",
        "redirect_uri": "http://127.0.0.1/cb",
        "scope": ["openid"],
        "state": None,
        "nonce": None,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "resource": "http://127.0.0.1:8000",
        "prompt": frozenset(),
        "max_age": None,
    }
    fields.update(kw)
    return AuthorizationRequest(**fields)


NOW = 1_700_000_000


@pytest.mark.parametrize(
    ("kw", "auth_time", "usable"),
    [
        ({}, NOW - 86_400, True),  # no constraint: any existing login
        ({}, None, False),  # no login at all
        ({"prompt": frozenset({"login"})}, NOW, False),  # prompt=login forces a fresh login
        ({"prompt": frozenset({"login", "consent"})}, NOW, False),
        ({"prompt": frozenset({"select_account"})}, NOW, False),
        ({"prompt": frozenset({"consent"})}, NOW - 10, True),  # consent does not force login
        ({"prompt": frozenset({"none"})}, NOW - 10, True),
        ({"max_age": 300}, NOW - 300, True),  # exactly at the limit
        ({"max_age": 300}, NOW - 299, True),
        ({"max_age": 300}, NOW - 301, False),  # older than max_age
        ({"max_age": 0}, NOW - 1, False),
        ({"max_age": 300}, None, False),
    ],
)
def test_session_usable_honours_prompt_login_and_max_age(
    kw: dict[str, Any], auth_time: int | None, usable: bool
) -> None:
    assert session_usable(request(**kw), auth_time=auth_time, now=NOW) is usable


def test_max_age_zero_forces_a_fresh_login() -> None:
    assert session_usable(request(max_age=0), auth_time=NOW, now=NOW) is False


@pytest.mark.parametrize(
    ("kw", "remembered"),
    [
        ({"is_integration": True, "token_endpoint_auth_method": "client_secret_post"}, True),
        ({"is_integration": True, "token_endpoint_auth_method": "none"}, False),
        ({"is_integration": False, "token_endpoint_auth_method": "client_secret_post"}, False),
        ({"is_integration": False, "token_endpoint_auth_method": "none"}, False),
    ],
)
def test_consent_is_remembered_only_for_confidential_integrations(kw: dict[str, Any], remembered: bool) -> None:
    assert consent_can_be_remembered(make_client(**kw)) is remembered
