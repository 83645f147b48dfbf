"""Every refusal of the code and refresh grants carries its cause as a `detail` for the
log (fosite's debug text): most of them tell the client the same words, so without it the
log could not tell a stolen token from a clock or a client bug. The detail never reaches
the client (the body is `error` and `error_description` alone)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from courseschool.authz.protocol.grants.authorization_code import exchange_code
from courseschool.authz.protocol.grants.refresh_token import INVALID, refresh
from courseschool.authz.protocol.models import RefreshToken
from courseschool.authz.protocol.ports import Rotation
from courseschool.authz.protocol.token_request import TokenForm
from courseschool.common.errors import PlatformError

from .factories import make_client, make_code, make_grant, make_user
from .test_authorization_code import NOW, form, setup

TOKEN = "the-refresh-token"
JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"


class RefreshGrants:
    """The GrantStore and Revoker ports of one refresh token."""

    def __init__(self, token: RefreshToken | None, *, rotation: Rotation, bound: str | None) -> None:
        self.token = token
        self.rotation = rotation
        self.bound = bound
        self.revoked: list[tuple[str, str]] = []
        self.rotated: list[str] = []

    async def get_refresh_token(self, token: str) -> RefreshToken | None:
        return self.token if token == TOKEN else None

    async def rotate_refresh_token(self, *, old: str, new: str, grant_id: str, replay: bytes, now: int) -> Rotation:
        self.rotated.append(old)
        return self.rotation

    async def bind_dpop_key(self, grant_id: str, jkt: str) -> str | None:
        return self.bound or jkt

    async def revoke_grant(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        self.revoked.append((grant_id, reason))

    async def announce_ended(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:
        raise AssertionError("a refresh ends no other grant")


def _token(**overrides: Any) -> RefreshToken:
    fields: dict[str, Any] = {
        "grant": make_grant(),
        "user": make_user(),
        "scope": "openid courses:read",
        "resource": "http://127.0.0.1:8000",
        "created_at": NOW - 60,
        "consumed_at": None,
        "replay": None,
        "successor_live": False,
    }
    fields.update(overrides)
    return RefreshToken(**fields)


async def _refused_refresh(
    token: RefreshToken | None,
    *,
    rotation: Rotation = Rotation.ROTATED,
    bound: str | None = None,
    jkt: str | None = None,
    **form_fields: Any,
) -> PlatformError:
    ctx, _, _ = setup()
    grants = RefreshGrants(token, rotation=rotation, bound=bound)
    ctx = msgspec.structs.replace(ctx, grants=grants, revoker=grants)
    fields = {"grant_type": "refresh_token", "client_id": "client-1", "refresh_token": TOKEN} | form_fields
    with pytest.raises(PlatformError) as info:
        await refresh(TokenForm(**fields), make_client(), ctx, jkt)
    return info.value


REFRESH_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown token", {"token": None}, "no refresh token has this value"),
    ("missing token", {"token": _token(), "refresh_token": None}, "no refresh_token"),
    ("revoked grant", {"token": _token(grant=make_grant(revoked=True))}, "grant grant-1 is revoked"),
    ("another client's", {"token": _token(grant=make_grant(client_id="client-2"))}, "client client-2's"),
    ("idle too long", {"token": _token(created_at=NOW - 86401)}, "idle lifetime"),
    ("grant too old", {"token": _token(grant=make_grant(created_at=NOW - 8 * 86400))}, "absolute lifetime"),
    ("bound to a key, no proof", {"token": _token(grant=make_grant(dpop_jkt=JKT))}, "the proof's key: no proof"),
    ("another proof bound it first", {"token": _token(), "jkt": JKT, "bound": "other"}, "concurrent first proof"),
    ("widened scope", {"token": _token(), "scope": "openid orders:write"}, "orders:write beyond the grant"),
    ("resource not covered", {"token": _token(), "resource": ("https://x.example",)}, "the grant covers"),
    ("user disabled", {"token": _token(user=make_user(disabled=True))}, "user user-1 is disabled"),
    ("role allows nothing", {"token": _token(user=make_user(role="student"), scope="orders:write")}, "role student"),
    ("revoked during rotation", {"token": _token(), "rotation": Rotation.GRANT_REVOKED}, "during the rotation"),
    ("reused late", {"token": _token(consumed_at=NOW - 11)}, "past the 10 s retry window"),
    ("reused after its successor", {"token": _token(consumed_at=NOW - 1)}, "was used"),
]


@pytest.mark.parametrize(("case", "kw", "cause"), REFRESH_REFUSALS, ids=[c for c, _, _ in REFRESH_REFUSALS])
async def test_every_refresh_refusal_says_its_cause_for_the_log(case: str, kw: dict[str, Any], cause: str) -> None:
    err = await _refused_refresh(**kw)
    assert err.detail and cause in err.detail, err.detail
    assert err.detail not in repr(err.body())


async def test_the_refusals_that_read_alike_to_the_client_differ_in_the_log() -> None:
    """Five refusals said only INVALID, and logged nothing that told them apart."""
    refused = [await _refused_refresh(**kw) for _, kw, _ in REFRESH_REFUSALS]
    alike = [e for e in refused if e.description == INVALID]
    assert len(alike) >= 5
    assert len({e.detail for e in alike}) == len(alike)


CODE_REFUSALS: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("unknown code", {}, {"code": "other"}, "no authorization code has this value"),
    ("missing code", {}, {"code": None}, "no code"),
    ("used code", {"code": make_code(consumed=True)}, {}, "redeemed before: grant grant-1 revoked"),
    ("raced", {"redeem_result": False}, {}, "another request redeemed the code first"),
    ("another client's", {}, {"client_id": "client-2"}, "client client-1's, not client-2's"),
    ("expired", {"now": 1_700_000_065}, {}, "expired 5 s ago"),
    ("redirect_uri differs", {}, {"redirect_uri": "http://127.0.0.1:8080/x"}, "the request sent"),
    ("missing verifier", {}, {"code_verifier": None}, "no code_verifier"),
    ("malformed verifier", {}, {"code_verifier": "short"}, "5 characters"),
    ("wrong verifier", {}, {"code_verifier": "a" * 43}, "S256 digest"),
    ("bound to a key", {"code": make_code(dpop_jkt=JKT)}, {}, "the proof's key: no proof"),
    ("resource not covered", {}, {"resource": ("https://x.example",)}, "the grant covers"),
    ("grant revoked", {"grant": make_grant(revoked=True)}, {}, "grant grant-1 is revoked"),
    ("user disabled", {"user": make_user(disabled=True)}, {}, "user user-1 is disabled"),
]


@pytest.mark.parametrize(("case", "kw", "form_kw", "cause"), CODE_REFUSALS, ids=[c[0] for c in CODE_REFUSALS])
async def test_every_code_refusal_says_its_cause_for_the_log(
    case: str, kw: dict[str, Any], form_kw: dict[str, Any], cause: str
) -> None:
    ctx, _, _ = setup(**kw)
    client = make_client(client_id=form_kw.get("client_id", "client-1"))
    with pytest.raises(PlatformError) as info:
        await exchange_code(form(**form_kw), client, ctx)
    err = info.value
    assert err.detail and cause in err.detail, err.detail
    assert err.detail not in repr(err.body())
