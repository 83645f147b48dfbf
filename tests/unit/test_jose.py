"""JWT access-token checks of RFC 9068 §4 and the at-rest encryption of signing keys."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey

from courseschool.common import jose
from courseschool.common.errors import InvalidTokenError
from courseschool.common.jose import (
    KeyEncryptor,
    VerifiedTokens,
    decode_kek,
    generate_signing_key,
    key_set,
    new_kek,
    sign_jwt,
    unverified_header,
    verify_access_token,
)

ISSUER = "http://127.0.0.1:8000"
AUDIENCE = "http://127.0.0.1:8000"
NOW = 1_700_000_000

KID, PRIVATE, PUBLIC = generate_signing_key("ES256")
OTHER_KID, OTHER_PRIVATE, OTHER_PUBLIC = generate_signing_key("ES256")
RSA_KID, RSA_PRIVATE, RSA_PUBLIC = generate_signing_key("RS256")
KEYS = key_set([PUBLIC])


def claims(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "user-1",
        "aud": AUDIENCE,
        "client_id": "client-1",
        "scope": "openid",
        "jti": "jti-1",
        "iat": NOW,
        "nbf": NOW,
        "exp": NOW + 600,
    }
    out.update(overrides)
    return {k: v for k, v in out.items() if v is not None}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(obj: Any) -> str:
    return b64(json.dumps(obj).encode())


def forge(header: dict[str, Any], payload: dict[str, Any], key: Any, algorithms: list[str] | None = None) -> str:
    return jwt.encode(header, payload, key, algorithms=algorithms)


def good_token(**overrides: Any) -> str:
    return sign_jwt(claims(**overrides), PRIVATE, typ="at+jwt")


def verify(token: str, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "now": NOW}
    args.update(kw)
    return verify_access_token(token, KEYS, **args)


def test_generated_keys_carry_kid_alg_and_use() -> None:
    assert PRIVATE["kid"] == PUBLIC["kid"] == KID
    assert (PUBLIC["alg"], PUBLIC["use"], PUBLIC["kty"], PUBLIC["crv"]) == ("ES256", "sig", "EC", "P-256")
    assert "d" in PRIVATE and "d" not in PUBLIC
    assert RSA_PUBLIC["kty"] == "RSA" and "d" not in RSA_PUBLIC


def test_unsupported_signing_algorithm_is_refused() -> None:
    with pytest.raises(ValueError):
        generate_signing_key("HS256")


def test_valid_access_token_passes() -> None:
    got = verify(good_token())
    assert got["sub"] == "user-1"
    assert got["client_id"] == "client-1"


@pytest.mark.parametrize("typ", ["at+jwt", "AT+JWT", "application/at+jwt"])
def test_access_token_typ_is_accepted_case_insensitively(typ: str) -> None:
    assert verify(sign_jwt(claims(), PRIVATE, typ=typ))["jti"] == "jti-1"


@pytest.mark.parametrize(
    ("aud", "audience"),
    [([AUDIENCE, "https://other.example.com"], AUDIENCE), ("https://other.example.com", None)],
)
def test_audience_may_be_a_list_or_unchecked(aud: Any, audience: str | None) -> None:
    assert verify(good_token(aud=aud), audience=audience)["aud"] == aud


@pytest.mark.parametrize(
    "leeway_case",
    [
        {"exp": NOW - 29},  # expired, but within the 30 s leeway
        {"exp": NOW + 1},
        {"nbf": NOW + 30},  # not yet valid, within leeway
        {"nbf": None, "iat": NOW + 30},  # iat stands in for a missing nbf
    ],
)
def test_clock_skew_within_leeway_is_tolerated(leeway_case: dict[str, Any]) -> None:
    verify(good_token(**leeway_case))


def _none_token() -> str:
    return f"{b64json({'alg': 'none', 'typ': 'at+jwt', 'kid': KID})}.{b64json(claims())}."


def _hs256_with_public_key_token() -> str:
    secret = OctKey.import_key(json.dumps(PUBLIC).encode())
    return forge({"alg": "HS256", "typ": "at+jwt", "kid": KID}, claims(), secret)


def _tampered_token() -> str:
    head, _, sig = good_token().split(".")
    return f"{head}.{b64json(claims(sub='admin'))}.{sig}"


BAD_TOKENS = [
    ("typ JWT (an ID token)", lambda: sign_jwt(claims(), PRIVATE, typ="JWT")),
    ("no typ", lambda: forge({"alg": "ES256", "kid": KID}, claims(), ECKey.import_key(PRIVATE))),
    ("alg none", _none_token),
    ("alg none, no signature part", lambda: _none_token()[:-1]),
    ("HS256 keyed with the public key", _hs256_with_public_key_token),
    ("RS256 (not an access-token alg)", lambda: sign_jwt(claims(), RSA_PRIVATE, typ="at+jwt")),
    ("signed with an unknown key", lambda: sign_jwt(claims(), OTHER_PRIVATE, typ="at+jwt")),
    ("unknown key claiming our kid", lambda: sign_jwt(claims(), dict(OTHER_PRIVATE, kid=KID), typ="at+jwt")),
    ("tampered payload", _tampered_token),
    ("signature stripped", lambda: good_token().rsplit(".", 1)[0] + "."),
    ("wrong iss", lambda: good_token(iss="https://evil.example.com")),
    ("iss with trailing slash", lambda: good_token(iss=ISSUER + "/")),
    ("wrong aud", lambda: good_token(aud="https://other.example.com")),
    ("aud list without us", lambda: good_token(aud=["https://a.example.com", "https://b.example.com"])),
    ("expired beyond leeway", lambda: good_token(exp=NOW - 31)),
    ("expired exactly at leeway", lambda: good_token(exp=NOW - 30)),
    ("nbf in the future", lambda: good_token(nbf=NOW + 31)),
    ("iat in the future, no nbf", lambda: good_token(nbf=None, iat=NOW + 31)),
    ("exp not an integer", lambda: good_token(exp=str(NOW + 600))),
    ("exp a float", lambda: good_token(exp=float(NOW + 600))),
    ("nbf not an integer", lambda: good_token(nbf="0")),
    *[
        (f"missing {c}", (lambda c=c: good_token(**{c: None})))
        for c in ("iss", "sub", "aud", "exp", "iat", "jti", "client_id")
    ],
    ("garbage", lambda: "not-a-jwt"),
    ("empty", lambda: ""),
    ("three dots", lambda: "..."),
    ("header not base64", lambda: "%%%." + good_token().split(".", 1)[1]),
]


@pytest.mark.parametrize(("name", "token_factory"), BAD_TOKENS)
def test_bad_access_token_is_invalid_token(name: str, token_factory: Any) -> None:
    with pytest.raises(InvalidTokenError) as info:
        verify(token_factory())
    assert info.value.error == "invalid_token"
    assert info.value.status_code == 401
    # refused by the check the case is about, not by an earlier accident
    why = f"lacks the {name.split()[1]} claim" if name.startswith("missing ") else _WHY[name]
    assert why in info.value.description


_WHY = {
    "typ JWT (an ID token)": "not an access token",
    "no typ": "not an access token",
    "alg none": "algorithm",
    "alg none, no signature part": "algorithm",
    "HS256 keyed with the public key": "algorithm",
    "RS256 (not an access-token alg)": "algorithm",
    "signed with an unknown key": "signature",
    "unknown key claiming our kid": "signature",
    "tampered payload": "signature",
    "signature stripped": "signature",
    "wrong iss": "issuer",
    "iss with trailing slash": "issuer",
    "wrong aud": "not meant for this resource",
    "aud list without us": "not meant for this resource",
    "expired beyond leeway": "expired",
    "expired exactly at leeway": "expired",
    "nbf in the future": "not valid yet",
    "iat in the future, no nbf": "not valid yet",
    "exp not an integer": "expired",
    "exp a float": "expired",
    "nbf not an integer": "not valid yet",
    "garbage": "malformed",
    "empty": "malformed",
    "three dots": "malformed",
    "header not base64": "malformed",
}


@pytest.mark.parametrize("header", [[], "at+jwt", None, 1])
def test_non_object_jose_header_is_invalid_token(header: Any) -> None:
    with pytest.raises(InvalidTokenError):
        verify(f"{b64json(header)}.{b64json(claims())}.c2ln")


def test_unverified_header_reads_the_header_only() -> None:
    assert unverified_header(good_token()) == {"alg": "ES256", "kid": KID, "typ": "at+jwt"}


def test_token_verifies_against_a_set_holding_several_keys() -> None:
    keys = key_set([OTHER_PUBLIC, PUBLIC, RSA_PUBLIC])
    assert verify_access_token(good_token(), keys, issuer=ISSUER, audience=AUDIENCE, now=NOW)["sub"] == "user-1"


# -- tokens verified once per key set (introspection, UserInfo) ---------------------


@pytest.mark.parametrize(("name", "token_factory"), BAD_TOKENS)
def test_remembered_tokens_refuse_what_the_plain_check_refuses(name: str, token_factory: Any) -> None:
    verified = VerifiedTokens(KEYS, issuer=ISSUER, audience=AUDIENCE)
    verified.verify(good_token(), now=NOW, leeway=30)  # a genuine token is remembered first
    bad = token_factory()
    for _ in range(2):  # a refusal is not remembered as anything
        with pytest.raises(InvalidTokenError) as info:
            verified.verify(bad, now=NOW, leeway=30)
        why = f"lacks the {name.split()[1]} claim" if name.startswith("missing ") else _WHY[name]
        assert why in info.value.description
    assert len(verified) == 1


def _counting_decode(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    decode = jose.jwt.decode

    def counted(token: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(token)
        return decode(token, *args, **kwargs)

    monkeypatch.setattr(jose.jwt, "decode", counted)
    return calls


def test_a_token_seen_again_skips_the_signature_check(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_decode(monkeypatch)
    verified = VerifiedTokens(KEYS, issuer=ISSUER, audience=AUDIENCE)
    token = good_token()
    first = verified.verify(token, now=NOW, leeway=30)
    again = verified.verify(token, now=NOW + 60, leeway=30)
    assert first == again == verify(token)
    assert calls == [token, token]  # once by VerifiedTokens, once by the plain check above


def test_the_time_checks_run_at_every_use() -> None:
    verified = VerifiedTokens(KEYS, issuer=ISSUER, audience=AUDIENCE)
    token = good_token()
    verified.verify(token, now=NOW, leeway=0)
    with pytest.raises(InvalidTokenError, match="expired"):
        verified.verify(token, now=NOW + 600, leeway=0)
    with pytest.raises(InvalidTokenError, match="not valid yet"):
        verified.verify(token, now=NOW - 1, leeway=0)
    assert verified.verify(token, now=NOW + 599, leeway=0)["jti"] == "jti-1"


def test_another_key_set_checks_a_remembered_token_afresh() -> None:
    token = good_token()
    VerifiedTokens(KEYS, issuer=ISSUER, audience=AUDIENCE).verify(token, now=NOW, leeway=30)
    rotated = VerifiedTokens(key_set([OTHER_PUBLIC]), issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(InvalidTokenError, match="signature"):
        rotated.verify(token, now=NOW, leeway=30)


def test_the_caller_gets_its_own_copy_of_the_claims() -> None:
    verified = VerifiedTokens(KEYS, issuer=ISSUER, audience=None)
    token = good_token()
    verified.verify(token, now=NOW, leeway=30)["sub"] = "admin"
    assert verified.verify(token, now=NOW, leeway=30)["sub"] == "user-1"


def test_at_most_size_tokens_are_remembered_the_oldest_dropped_first(monkeypatch: pytest.MonkeyPatch) -> None:
    verified = VerifiedTokens(KEYS, issuer=ISSUER, audience=AUDIENCE, size=2)
    first, second, third = (good_token(jti=f"jti-{n}") for n in range(3))
    for token in (first, second, third):
        verified.verify(token, now=NOW, leeway=30)
    assert len(verified) == 2
    calls = _counting_decode(monkeypatch)
    verified.verify(third, now=NOW, leeway=30)
    verified.verify(first, now=NOW, leeway=30)
    assert calls == [first]  # the third was still there; the first had been dropped


# -- signing keys at rest --------------------------------------------------------


def test_key_encryptor_round_trip() -> None:
    enc = KeyEncryptor(decode_kek(new_kek()))
    sealed = enc.seal(KID, PRIVATE)
    assert isinstance(sealed, bytes)
    assert PRIVATE["d"].encode() not in sealed
    assert enc.open(KID, sealed) == PRIVATE


def test_key_encryptor_uses_a_fresh_nonce_each_time() -> None:
    enc = KeyEncryptor(decode_kek(new_kek()))
    assert enc.seal(KID, PRIVATE) != enc.seal(KID, PRIVATE)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda enc, sealed: enc.open("another-kid", sealed),  # kid is the associated data
        lambda enc, sealed: enc.open(KID, sealed[:-1] + bytes([sealed[-1] ^ 1])),
        lambda enc, sealed: enc.open(KID, bytes([sealed[0] ^ 1]) + sealed[1:]),  # nonce
        lambda enc, sealed: KeyEncryptor(decode_kek(new_kek())).open(KID, sealed),  # another KEK
    ],
)
def test_key_encryptor_refuses_wrong_kid_tampering_or_wrong_kek(tamper: Any) -> None:
    enc = KeyEncryptor(decode_kek(new_kek()))
    sealed = enc.seal(KID, PRIVATE)
    with pytest.raises(InvalidTag):
        tamper(enc, sealed)


@pytest.mark.parametrize("padded", [True, False])
def test_decode_kek_accepts_32_bytes_with_or_without_padding(padded: bool) -> None:
    raw = bytes(range(32))
    value = base64.urlsafe_b64encode(raw).decode()
    assert decode_kek(value if padded else value.rstrip("=")) == raw


def test_new_kek_is_32_bytes_unpadded() -> None:
    kek = new_kek()
    assert "=" not in kek
    assert len(decode_kek(kek)) == 32


@pytest.mark.parametrize("nbytes", [0, 16, 31, 33, 64])
def test_decode_kek_refuses_wrong_length(nbytes: int) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        decode_kek(b64(bytes(nbytes)))
