"""The refresh token grant (RFC 6749 §6) with rotation and reuse detection (RFC 9700
§4.14.2), DPoP binding (RFC 9449 §5) and resource indicators (RFC 8707 §2.2), against
in-memory ports and a frozen clock: every refusal before the rotation changes nothing."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from courseschool.authz.protocol.grants.refresh_token import refresh
from courseschool.authz.protocol.models import RefreshToken
from courseschool.authz.protocol.ports import Rotation
from courseschool.authz.protocol.token_request import TokenForm
from courseschool.common.errors import InvalidGrantError, InvalidRequestError, InvalidScopeError, InvalidTargetError

from .factories import (
    RESOURCE,
    RecordingSigner,
    make_client,
    make_grant,
    make_refresh_token,
    make_user,
    token_context,
)

TOKEN = "the-refresh-token"
NOW = 1_700_000_100  # 100 s after make_refresh_token's token and grant were made
DAY = 86400
JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
OTHER_JKT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


class Grants:
    """The GrantStore and Revoker ports of the refresh grant, recording every change."""

    def __init__(self, token: RefreshToken, *, rotation: Rotation = Rotation.ROTATED, bound: str | None = None):
        self.tokens = {TOKEN: token}
        self.rotation = rotation
        self.bound = bound  # what bind_dpop_key finds bound (None: the key asked for)
        self.rotated: list[dict[str, Any]] = []
        self.bindings: list[tuple[str, str]] = []
        self.revoked: list[tuple[str, str]] = []

    async def get_refresh_token(self, token: str) -> RefreshToken | None:
        return self.tokens.get(token)

    async def rotate_refresh_token(self, *, old: str, new: str, grant_id: str, replay: bytes, now: int) -> Rotation:
        self.rotated.append({"old": old, "new": new, "grant_id": grant_id, "replay": replay, "now": now})
        return self.rotation

    async def bind_dpop_key(self, grant_id: str, jkt: str) -> str | None:
        self.bindings.append((grant_id, jkt))
        return self.bound or jkt

    async def revoke_grant(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:  # the Revoker port
        self.revoked.append((grant_id, reason))

    async def announce_ended(self, grant_id: str, *, reason: str, ip: str | None = None) -> None:  # the Revoker port
        raise AssertionError("a refresh ends no other grant")


class NoCodes:
    async def get(self, code: str) -> None:
        raise AssertionError("a refresh reads no authorization code")


class NoUsers:
    """The refresh reads the user with its token, never on its own."""

    async def get(self, user_id: str) -> None:
        raise AssertionError("a user was read apart from the refresh token")


def setup(token: RefreshToken | None = None, *, now: int = NOW, **store: Any) -> tuple[Any, Grants, RecordingSigner]:
    grants = Grants(token if token is not None else make_refresh_token(), **store)
    signer = RecordingSigner()
    return token_context(codes=NoCodes(), grants=grants, users=NoUsers(), signer=signer, now=now), grants, signer


def form(**overrides: Any) -> TokenForm:
    fields: dict[str, Any] = {"grant_type": "refresh_token", "client_id": "client-1", "refresh_token": TOKEN}
    fields.update(overrides)
    return TokenForm(**fields)


def used(token: RefreshToken, **changes: Any) -> RefreshToken:
    """The token as the store shows it once rotated: consumed, its successor unused."""
    return msgspec.structs.replace(token, **{"consumed_at": NOW - 2, "successor_live": True, **changes})


async def test_a_refresh_rotates_once_and_mints_for_the_grant() -> None:
    ctx, grants, signer = setup()
    out = await refresh(form(), make_client(), ctx)
    assert out.token_type == "Bearer" and out.scope == "openid courses:read"
    assert out.refresh_token and out.refresh_token != TOKEN
    (rotated,) = grants.rotated
    assert (rotated["old"], rotated["new"], rotated["grant_id"], rotated["now"]) == (
        TOKEN,
        out.refresh_token,
        "grant-1",
        NOW,
    )
    assert grants.revoked == [] and grants.bindings == []
    (claims,) = signer.access_claims  # minted for the token's grant, user and resource
    assert {k: claims[k] for k in ("aud", "sub", "grant_id")} == {
        "aud": RESOURCE,
        "sub": "user-1",
        "grant_id": "grant-1",
    }


async def test_a_narrower_scope_is_granted_as_asked() -> None:
    ctx, _, signer = setup()
    out = await refresh(form(scope="courses:read"), make_client(), ctx)
    assert out.scope == "courses:read" and out.id_token is None
    assert signer.access_claims[0]["scope"] == "courses:read"


@pytest.mark.parametrize(
    ("case", "token", "now", "form_kw", "client_kw", "error_cls"),
    [
        ("missing refresh_token", None, NOW, {"refresh_token": None}, {}, InvalidRequestError),
        ("unknown refresh_token", None, NOW, {"refresh_token": "other-token"}, {}, InvalidGrantError),
        ("token of another client", None, NOW, {"client_id": "client-2"}, {"client_id": "client-2"}, InvalidGrantError),
        ("grant revoked", make_refresh_token(grant=make_grant(revoked=True)), NOW, {}, {}, InvalidGrantError),
        ("user disabled", make_refresh_token(user=make_user(disabled=True)), NOW, {}, {}, InvalidGrantError),
        ("idle too long", None, 1_700_000_000 + DAY + 1, {}, {}, InvalidGrantError),
        (
            "grant older than the absolute lifetime",
            make_refresh_token(created_at=1_700_000_000 + 7 * DAY - 100),
            1_700_000_000 + 7 * DAY + 1,
            {},
            {},
            InvalidGrantError,
        ),
        (
            "bound to a key, no proof",
            make_refresh_token(grant=make_grant(dpop_jkt=JKT)),
            NOW,
            {},
            {},
            InvalidGrantError,
        ),
        ("scope widened", None, NOW, {"scope": "openid courses:read coupons:write"}, {}, InvalidScopeError),
        ("scope blank", None, NOW, {"scope": " "}, {}, InvalidScopeError),
        (
            "role allows nothing of the grant any more",
            make_refresh_token(scope="courses:write", user=make_user(role="student")),
            NOW,
            {},
            {},
            InvalidGrantError,
        ),
        ("resource not covered", None, NOW, {"resource": ("https://other.example.com",)}, {}, InvalidTargetError),
        ("malformed resource", None, NOW, {"resource": ("http://127.0.0.1:8000#x",)}, {}, InvalidTargetError),
    ],
)
async def test_a_refused_refresh_rotates_nothing_and_revokes_nothing(
    case: str,
    token: RefreshToken | None,
    now: int,
    form_kw: dict[str, Any],
    client_kw: dict[str, Any],
    error_cls: type[Exception],
) -> None:
    ctx, grants, signer = setup(token, now=now)
    with pytest.raises(error_cls) as info:
        await refresh(form(**form_kw), make_client(**client_kw), ctx)
    assert type(info.value) is error_cls
    assert grants.rotated == []  # rotate_refresh_token never called: the token stays usable
    assert grants.revoked == [] and grants.bindings == []
    assert signer.access_claims == []


async def test_a_proof_by_another_key_is_refused_before_anything_changes() -> None:
    ctx, grants, signer = setup(make_refresh_token(grant=make_grant(dpop_jkt=JKT)))
    with pytest.raises(InvalidGrantError, match="DPoP"):
        await refresh(form(), make_client(), ctx, OTHER_JKT)
    assert grants.rotated == [] and grants.revoked == [] and grants.bindings == []
    assert signer.access_claims == []


async def test_a_public_clients_first_proof_binds_its_grant() -> None:
    ctx, grants, signer = setup()
    out = await refresh(form(), make_client(), ctx, JKT)
    assert grants.bindings == [("grant-1", JKT)]
    assert out.token_type == "DPoP" and signer.access_claims[0]["cnf"] == {"jkt": JKT}


async def test_a_grant_bound_first_by_another_proof_refuses_and_rotates_nothing() -> None:
    """Two first proofs at once: the key bound first wins, the other request is refused."""
    ctx, grants, signer = setup(bound=OTHER_JKT)
    with pytest.raises(InvalidGrantError, match="DPoP"):
        await refresh(form(), make_client(), ctx, JKT)
    assert grants.rotated == [] and grants.revoked == [] and signer.access_claims == []


async def test_reuse_after_the_retry_window_revokes_the_grant() -> None:
    ctx, grants, signer = setup(used(make_refresh_token(), consumed_at=NOW - 11, replay=b"sealed"))
    with pytest.raises(InvalidGrantError):
        await refresh(form(), make_client(), ctx)
    assert grants.revoked == [("grant-1", "refresh_reused")]
    assert grants.rotated == [] and signer.access_claims == []


async def test_reuse_once_the_successor_was_used_revokes_the_grant() -> None:
    ctx, grants, _ = setup(used(make_refresh_token(), successor_live=False, replay=b"sealed"))
    with pytest.raises(InvalidGrantError):
        await refresh(form(), make_client(), ctx)
    assert grants.revoked == [("grant-1", "refresh_reused")]


async def test_a_retry_inside_the_window_gets_the_first_answer_back() -> None:
    ctx, grants, signer = setup()
    first = await refresh(form(), make_client(), ctx)
    grants.tokens[TOKEN] = used(make_refresh_token(), replay=grants.rotated[0]["replay"])
    again = await refresh(form(), make_client(), ctx)
    assert again == first
    assert len(grants.rotated) == 1 and grants.revoked == [] and len(signer.access_claims) == 1


async def test_a_rotation_lost_to_a_revocation_is_refused_without_revoking_again() -> None:
    ctx, grants, _ = setup(rotation=Rotation.GRANT_REVOKED)
    with pytest.raises(InvalidGrantError):
        await refresh(form(), make_client(), ctx)
    assert len(grants.rotated) == 1 and grants.revoked == []
