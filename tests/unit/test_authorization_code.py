"""The authorization code grant (RFC 6749 §4.1.3) with PKCE (RFC 7636 §4.6) and
resource indicators (RFC 8707 §2.2), against in-memory ports and a frozen clock."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from courseschool.authz.protocol.context import TokenContext
from courseschool.authz.protocol.grants.authorization_code import exchange_code
from courseschool.authz.protocol.models import AuthorizationCode, EndedGrant, Grant, User
from courseschool.authz.protocol.token_request import TokenForm
from courseschool.common.errors import InvalidGrantError, InvalidRequestError, InvalidTargetError

from .factories import (
    GRANTS_PER_APP,
    LOOPBACK_CB,
    RESOURCE,
    RecordingSigner,
    make_client,
    make_code,
    make_grant,
    make_user,
    token_context,
)

VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 Appendix B; make_code holds its challenge
CODE = "the-code"
NOW = 1_700_000_030  # make_code expires at 1_700_000_060


class Codes:
    def __init__(self, *items: tuple[str, AuthorizationCode]) -> None:
        self.by_value = dict(items)

    async def get(self, code: str) -> AuthorizationCode | None:
        return self.by_value.get(code)


class Grants:
    def __init__(self, *, redeem_result: bool = True, ended: tuple[EndedGrant, ...] = ()) -> None:
        self.redeem_result = redeem_result
        self.ended = list(ended)
        self.revoked: list[tuple[str, str]] = []
        self.announced: list[tuple[str, str]] = []
        self.redeemed: list[dict[str, Any]] = []

    async def revoke_grant(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:  # the Revoker port
        self.revoked.append((grant_id, reason))

    async def announce_ended(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:  # the Revoker port
        self.announced.append((grant_id, reason))

    async def redeem_code(
        self,
        *,
        code: str,
        refresh_token: str | None,
        scope: str,
        resource: str,
        now: int,
        grants_per_app: int,
        dpop_jkt: str | None = None,
    ) -> list[EndedGrant] | None:
        redeemed = {"code": code, "refresh_token": refresh_token, "scope": scope, "resource": resource, "now": now}
        assert grants_per_app == GRANTS_PER_APP
        if dpop_jkt is not None:
            redeemed["dpop_jkt"] = dpop_jkt
        self.redeemed.append(redeemed)
        return self.ended if self.redeem_result else None


class Users:
    """The exchange reads the user with its code, never on its own."""

    async def get(self, user_id: str) -> User | None:
        raise AssertionError("a user was read apart from the code")


def setup(
    *,
    code: AuthorizationCode | None = None,
    grant: Grant | None = None,
    user: User | None = None,
    redeem_result: bool = True,
    now: int = NOW,
    ended: tuple[EndedGrant, ...] = (),
) -> tuple[TokenContext, Grants, RecordingSigner]:
    grants = Grants(redeem_result=redeem_result, ended=ended)
    code = code if code is not None else make_code()
    if grant is not None or user is not None:
        code = msgspec.structs.replace(code, grant=grant or code.grant, user=user or code.user)
    signer = RecordingSigner()
    ctx = token_context(codes=Codes((CODE, code)), grants=grants, users=Users(), signer=signer, now=now)
    return ctx, grants, signer


def form(**overrides: Any) -> TokenForm:
    fields: dict[str, Any] = {
        "grant_type": "authorization_code",
        "client_id": "client-1",
        "code": CODE,
        "redirect_uri": LOOPBACK_CB,
        "code_verifier": VERIFIER,
    }
    fields.update(overrides)
    return TokenForm(**fields)


async def test_valid_code_is_exchanged_and_consumed_once() -> None:
    ctx, grants, signer = setup()
    out = await exchange_code(form(), make_client(), ctx)
    assert out.token_type == "Bearer"
    assert out.scope == "openid courses:read"
    assert out.expires_in == 600
    assert out.id_token is not None  # openid was granted
    assert out.refresh_token  # the client may refresh
    assert grants.revoked == []
    (redeemed,) = grants.redeemed
    assert redeemed == {
        "code": CODE,
        "refresh_token": out.refresh_token,
        "scope": "openid courses:read",
        "resource": RESOURCE,
        "now": NOW,
    }
    (claims,) = signer.access_claims
    assert (claims["aud"], claims["sub"], claims["client_id"], claims["grant_id"]) == (
        RESOURCE,
        "user-1",
        "client-1",
        "grant-1",
    )
    ((id_claims, _alg),) = signer.id_claims
    assert id_claims["nonce"] == "n-0S6_WzA2Mj"  # the nonce of the authorization request


async def test_client_without_refresh_grant_gets_no_refresh_token() -> None:
    ctx, grants, _ = setup()
    out = await exchange_code(form(), make_client(grant_types=["authorization_code"]), ctx)
    assert out.refresh_token is None
    assert grants.redeemed[0]["refresh_token"] is None


@pytest.mark.parametrize("resource", [(RESOURCE,), ("HTTP://127.0.0.1:8000/",), (RESOURCE, RESOURCE + "/")])
async def test_resource_covered_by_the_grant_is_accepted_in_any_spelling(resource: tuple[str, ...]) -> None:
    ctx, _, signer = setup()
    await exchange_code(form(resource=resource), make_client(), ctx)
    assert signer.access_claims[0]["aud"] == RESOURCE


async def test_reused_code_revokes_the_grant_and_is_invalid_grant() -> None:
    ctx, grants, signer = setup(code=make_code(consumed=True))
    with pytest.raises(InvalidGrantError) as info:
        await exchange_code(form(), make_client(), ctx)
    assert info.value.error == "invalid_grant"
    assert grants.revoked == [("grant-1", "code_reused")]
    assert grants.redeemed == []
    assert signer.access_claims == []


async def test_lost_redemption_race_revokes_and_is_invalid_grant() -> None:
    ctx, grants, signer = setup(redeem_result=False)
    with pytest.raises(InvalidGrantError):
        await exchange_code(form(), make_client(), ctx)
    assert len(grants.redeemed) == 1
    assert grants.revoked == [("grant-1", "code_reused")]
    assert signer.access_claims == []  # nothing minted


@pytest.mark.parametrize(
    ("case", "kw", "form_kw", "client_kw", "error_cls"),
    [
        ("unknown code", {}, {"code": "other-code"}, {}, InvalidGrantError),
        ("expired code", {"now": 1_700_000_060}, {}, {}, InvalidGrantError),  # expires_at <= now
        ("long expired code", {"now": 1_700_009_999}, {}, {}, InvalidGrantError),
        ("code of another client", {}, {"client_id": "client-2"}, {"client_id": "client-2"}, InvalidGrantError),
        ("redirect_uri differs", {}, {"redirect_uri": "http://127.0.0.1:8080/other"}, {}, InvalidGrantError),
        ("redirect_uri port differs", {}, {"redirect_uri": "http://127.0.0.1:9090/callback"}, {}, InvalidGrantError),
        ("wrong verifier", {}, {"code_verifier": "a" * 43}, {}, InvalidGrantError),
        ("malformed verifier", {}, {"code_verifier": "short"}, {}, InvalidRequestError),
        ("missing verifier", {}, {"code_verifier": None}, {}, InvalidRequestError),
        ("missing code", {}, {"code": None}, {}, InvalidRequestError),
        ("missing redirect_uri", {}, {"redirect_uri": None}, {}, InvalidRequestError),
        ("resource not covered", {}, {"resource": ("https://other.example.com",)}, {}, InvalidTargetError),
        (
            "one of two resources not covered",
            {},
            {"resource": (RESOURCE, "https://other.example.com")},
            {},
            InvalidTargetError,
        ),
        ("malformed resource", {}, {"resource": ("http://127.0.0.1:8000#x",)}, {}, InvalidTargetError),
        ("grant revoked", {"grant": make_grant(revoked=True)}, {}, {}, InvalidGrantError),
        ("user disabled", {"user": make_user(disabled=True)}, {}, {}, InvalidGrantError),
    ],
)
async def test_failed_check_consumes_nothing_and_revokes_nothing(
    case: str, kw: dict[str, Any], form_kw: dict[str, Any], client_kw: dict[str, Any], error_cls: type[Exception]
) -> None:
    ctx, grants, signer = setup(**kw)
    with pytest.raises(error_cls) as info:
        await exchange_code(form(**form_kw), make_client(**client_kw), ctx)
    assert type(info.value) is error_cls
    assert grants.redeemed == []  # redeem_code never called: the code stays usable
    assert grants.revoked == []
    assert signer.access_claims == []


async def test_the_grants_the_redemption_ended_are_announced_not_revoked_again() -> None:
    """The store ends them in the redemption's own statement; the exchange only sends the
    audit events and the revocation feed."""
    ended = (EndedGrant(grant_id="grant-0", reason="replaced"), EndedGrant(grant_id="grant-00", reason="superseded"))
    ctx, grants, _ = setup(ended=ended)
    await exchange_code(form(), make_client(), ctx)
    assert grants.announced == [("grant-0", "replaced"), ("grant-00", "superseded")]
    assert grants.revoked == []


async def test_a_refused_exchange_ends_nothing() -> None:
    ctx, grants, _ = setup(ended=(EndedGrant(grant_id="grant-0", reason="superseded"),))
    with pytest.raises(InvalidGrantError):
        await exchange_code(form(code_verifier="x" * 43), make_client(), ctx)
    assert grants.revoked == [] and grants.announced == [] and grants.redeemed == []


JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
OTHER_JKT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


@pytest.mark.parametrize("jkt", [None, OTHER_JKT])
async def test_a_code_bound_by_dpop_jkt_needs_a_proof_by_that_key(jkt: str | None) -> None:
    ctx, grants, signer = setup(code=make_code(dpop_jkt=JKT))
    with pytest.raises(InvalidGrantError, match="dpop_jkt"):
        await exchange_code(form(), make_client(), ctx, jkt)
    assert grants.redeemed == [] and grants.revoked == [] and signer.access_claims == []


async def test_a_proof_binds_the_access_token_and_a_public_clients_refresh_tokens() -> None:
    ctx, grants, signer = setup(code=make_code(dpop_jkt=JKT))
    out = await exchange_code(form(), make_client(), ctx, JKT)
    assert out.token_type == "DPoP"
    assert signer.access_claims[0]["cnf"] == {"jkt": JKT}
    assert grants.redeemed[0]["dpop_jkt"] == JKT


async def test_a_confidential_clients_refresh_tokens_are_not_bound_to_the_proof_key() -> None:
    ctx, grants, signer = setup()
    out = await exchange_code(form(), make_client(token_endpoint_auth_method="client_secret_post"), ctx, JKT)
    assert out.token_type == "DPoP" and signer.access_claims[0]["cnf"] == {"jkt": JKT}
    assert "dpop_jkt" not in grants.redeemed[0]
