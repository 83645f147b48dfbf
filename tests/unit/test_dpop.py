"""DPoP proofs, RFC 9449: the checks of §4.3 one by one, the thumbprint (RFC 7638), `ath`
(§4.2), `htu` normalisation, the replay cache and the server nonce (§8, §11.1), and a
protected resource's sender rule (§7.1, §7.2). The proofs are made as a client makes them
(tests/support/dpop_proofs.py); the state is the production in-memory store."""

from __future__ import annotations

from typing import Any

import pytest
from joserfc.jwk import ECKey, OctKey

from courseschool.common.clock import FrozenClock
from courseschool.common.dpop import (
    DpopChecker,
    DpopPolicy,
    ProofTarget,
    access_token_hash,
    check_sender,
    confirmation_jkt,
    jwk_thumbprint,
    verify_proof,
)
from courseschool.common.dpop_store import MemoryDpopStore
from courseschool.common.errors import InvalidDpopProofError, InvalidTokenError, UseDpopNonceError
from courseschool.common.uris import comparable_uri

from ..support.dpop_proofs import DpopKey, unsigned

NOW = 1_700_000_000
URL = "https://school.example/api/oauth/token"
TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln"

# RFC 7638 §3.1.
RFC_7638_KEY = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3"
    "oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6"
    "qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJz"
    "KnqDKgw",
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}


@pytest.fixture(scope="module")
def key() -> DpopKey:
    return DpopKey("ES256")


def check(proof: str, *, method: str = "POST", url: str = URL, access_token: str | None = None) -> Any:
    return verify_proof(proof, method=method, url=url, now=NOW, window=60, access_token=access_token)


def test_the_thumbprint_is_rfc_7638s_example() -> None:
    assert jwk_thumbprint(RFC_7638_KEY) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_ath_is_rfc_9449s_example() -> None:
    # RFC 9449 §7.1, Figure 12.
    assert access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU") == (
        "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    )


@pytest.mark.parametrize("alg", ["ES256", "Ed25519", "EdDSA", "RS256", "PS256"])
def test_a_proof_of_each_advertised_algorithm_is_accepted(alg: str) -> None:
    signer = DpopKey(alg)
    proof = check(signer.proof("POST", URL, iat=NOW, access_token=TOKEN, nonce="n1"), access_token=TOKEN)
    assert proof.jkt == signer.jkt and proof.nonce == "n1" and proof.iat == NOW


def _refusals(key: DpopKey) -> list[tuple[str, str, str]]:
    other = DpopKey("ES256")
    small_rsa = DpopKey("RS256", rsa_bits=1024)
    oct_key = OctKey.generate_key(256)
    private = key.key.as_dict(private=True)
    return [
        ("no typ", key.proof("POST", URL, iat=NOW, leave_out=("typ",)), "typ"),
        ("typ JWT", key.proof("POST", URL, iat=NOW, header={"typ": "JWT"}), "typ"),
        ("alg none", unsigned("POST", URL, key.public_jwk, iat=NOW), "alg"),
        ("alg HS256 (symmetric)", _hs256(oct_key), "alg"),
        ("an ES256 alg over an RSA key", key.proof("POST", URL, iat=NOW, header={"jwk": small_rsa.public_jwk}), "key"),
        ("no jwk", key.proof("POST", URL, iat=NOW, leave_out=("jwk",)), "jwk"),
        ("a private jwk", key.proof("POST", URL, iat=NOW, header={"jwk": private}), "private"),
        ("signed by another key", key.proof("POST", URL, iat=NOW, signer=other.key), "signature"),
        ("a short RSA key", small_rsa.proof("POST", URL, iat=NOW), "bits"),
        ("an unencoded payload", key.proof("POST", URL, iat=NOW, header={"b64": False, "crit": ["b64"]}), "header"),
        ("wrong htm", key.proof("GET", URL, iat=NOW), "htm"),
        ("htu of another path", key.proof("POST", URL.replace("token", "revoke"), iat=NOW), "htu"),
        ("htu of another origin", key.proof("POST", URL.replace("school.", "evil."), iat=NOW), "htu"),
        ("htu not a URI", key.proof("POST", URL, iat=NOW, claims={"htu": "token"}), "htu"),
        ("stale iat", key.proof("POST", URL, iat=NOW - 61), "iat"),
        ("iat in the future", key.proof("POST", URL, iat=NOW + 61), "iat"),
        ("iat a string", key.proof("POST", URL, claims={"iat": str(NOW)}), "iat"),
        ("no jti", key.proof("POST", URL, iat=NOW, leave_out=("jti",)), "jti"),
        ("an overlong jti", key.proof("POST", URL, iat=NOW, jti="j" * 513), "jti"),
        ("a payload that is not UTF-8", _raw_payload(key, b'{"jti": "\xbb", "htm": "POST"}'), "JSON object"),
        # Past msgspec's recursion limit, which would raise RecursionError (finding 17).
        ("a payload nested too deep", _raw_payload(key, b"[" * 1000 + b"]" * 1000), "JSON object"),
        ("not a JWS", "not.a-proof", "JWS"),
        ("too long", "a" * 9000, "JWS"),
    ]


def _raw_payload(key: DpopKey, payload: bytes) -> str:
    """A proof properly signed by its own jwk over a payload given as bytes."""
    from joserfc import jws

    registry = jws.JWSRegistry(algorithms=[key.alg], strict_check_header=False)
    head = {"typ": "dpop+jwt", "alg": key.alg, "jwk": key.public_jwk}
    return jws.serialize_compact(head, payload, key.key, registry=registry)


def _hs256(oct_key: OctKey) -> str:
    from joserfc import jws

    registry = jws.JWSRegistry(algorithms=["HS256"], strict_check_header=False)
    head = {"typ": "dpop+jwt", "alg": "HS256", "jwk": oct_key.as_dict(private=False)}
    payload = b'{"jti": "j1", "htm": "POST", "htu": "%s", "iat": %d}' % (URL.encode(), NOW)
    return jws.serialize_compact(head, payload, oct_key, registry=registry)


def test_each_rule_of_section_4_3_refuses_a_proof_that_breaks_it(key: DpopKey) -> None:
    for name, proof, says in _refusals(key):
        with pytest.raises(InvalidDpopProofError) as refused:
            check(proof)
        assert refused.value.error == "invalid_dpop_proof" and refused.value.status_code == 400, name
        assert says in refused.value.description, (name, refused.value.description)


def test_at_a_resource_ath_must_be_the_hash_of_the_token_sent(key: DpopKey) -> None:
    with pytest.raises(InvalidDpopProofError, match="ath"):
        check(key.proof("GET", URL, iat=NOW), method="GET", access_token=TOKEN)  # no ath
    with pytest.raises(InvalidDpopProofError, match="ath"):
        check(key.proof("GET", URL, iat=NOW, access_token="another"), method="GET", access_token=TOKEN)
    assert check(key.proof("GET", URL, iat=NOW, access_token=TOKEN), method="GET", access_token=TOKEN)


@pytest.mark.parametrize(
    ("proof_htu", "request_uri"),
    [
        ("https://school.example/api/oauth/token", "https://school.example/api/oauth/token?x=1"),
        ("https://school.example/api/oauth/token?x=2#f", "https://school.example/api/oauth/token"),
        ("HTTPS://School.EXAMPLE:443/api/oauth/token", "https://school.example/api/oauth/token"),
        ("http://127.0.0.1:80/a", "http://127.0.0.1/a"),
        ("https://school.example/api/./oauth/x/../token", "https://school.example/api/oauth/token"),
        ("https://school.example/%61pi/oauth/token", "https://school.example/api/oauth/token"),
        ("https://school.example/a%2fb", "https://school.example/a%2Fb"),
        ("https://school.example", "https://school.example/"),
        ("http://[::1]:8000/token", "http://[::1]:8000/token"),
    ],
)
def test_htu_matches_after_rfc_3986_normalisation(proof_htu: str, request_uri: str) -> None:
    assert comparable_uri(proof_htu) == comparable_uri(request_uri) is not None


@pytest.mark.parametrize(
    ("proof_htu", "request_uri"),
    [
        ("https://school.example/api/oauth/token", "http://school.example/api/oauth/token"),
        ("https://school.example:8443/api/oauth/token", "https://school.example/api/oauth/token"),
        ("https://school.example/api/oauth/token/", "https://school.example/api/oauth/token"),
        ("https://school.example/a%2Fb", "https://school.example/a/b"),
        ("https://school.example/API/oauth/token", "https://school.example/api/oauth/token"),
    ],
)
def test_htu_of_another_uri_does_not_match(proof_htu: str, request_uri: str) -> None:
    assert comparable_uri(proof_htu) != comparable_uri(request_uri)


@pytest.mark.parametrize("uri", ["ftp://school.example/x", "https://user:pw@school.example/x", "/token", "https://"])
def test_htu_must_be_an_absolute_http_uri_without_user_info(uri: str) -> None:
    assert comparable_uri(uri) is None


class RecordingStore(MemoryDpopStore):
    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[int] = []

    async def first_use(self, key: str, ttl: int) -> bool:
        self.ttls.append(ttl)
        return await super().first_use(key, ttl)


def checker(*, nonce_required: bool = False, store: MemoryDpopStore | None = None) -> tuple[DpopChecker, FrozenClock]:
    clock = FrozenClock(NOW)
    policy = DpopPolicy(window=60, nonce_required=nonce_required, nonce_rotation=300)
    return DpopChecker(store or MemoryDpopStore(), policy, clock), clock


def target(*proofs: str, method: str = "POST", url: str = URL) -> ProofTarget:
    return ProofTarget(method=method, url=url, proofs=proofs)


async def test_a_replayed_proof_is_refused_for_as_long_as_its_iat_is_acceptable(key: DpopKey) -> None:
    store = RecordingStore()
    dpop, _ = checker(store=store)
    proof = key.proof("POST", URL, iat=NOW)
    assert (await dpop.check(target(proof))).jkt == key.jkt
    with pytest.raises(InvalidDpopProofError, match="used before"):
        await dpop.check(target(proof))
    # Remembered while the proof could be accepted: through the second iat + 60, from
    # any moment of the second NOW (test_dpop_replay_outlives_acceptance).
    assert store.ttls == [61, 61]


async def test_the_replay_cache_is_per_key(key: DpopKey) -> None:
    dpop, _ = checker()
    await dpop.check(target(key.proof("POST", URL, iat=NOW, jti="same")))
    other = DpopKey("ES256")
    assert (await dpop.check(target(other.proof("POST", URL, iat=NOW, jti="same")))).jkt == other.jkt


async def test_exactly_one_dpop_header_is_accepted(key: DpopKey) -> None:
    dpop, _ = checker()
    with pytest.raises(InvalidDpopProofError, match="required"):
        await dpop.check(target())
    with pytest.raises(InvalidDpopProofError, match="exactly one"):
        await dpop.check(target(key.proof("POST", URL, iat=NOW), key.proof("POST", URL, iat=NOW)))


async def test_a_required_nonce_is_asked_for_then_accepted_until_the_next_rotation(key: DpopKey) -> None:
    dpop, clock = checker(nonce_required=True)
    with pytest.raises(UseDpopNonceError) as asked:
        await dpop.check(target(key.proof("POST", URL, iat=NOW)))
    assert asked.value.error == "use_dpop_nonce" and asked.value.status_code == 400
    nonce = asked.value.headers["DPoP-Nonce"]
    assert await dpop.nonce_header(target("a proof")) == {"DPoP-Nonce": nonce}
    assert await dpop.nonce_header(target()) == {}  # no proof, no nonce
    assert (await dpop.check(target(key.proof("POST", URL, iat=NOW, nonce=nonce)))).nonce == nonce
    with pytest.raises(UseDpopNonceError):
        await dpop.check(target(key.proof("POST", URL, iat=NOW, nonce="made-up")))
    clock.advance(300)  # the next period: the previous nonce still works, and a new one is handed out
    assert await dpop.check(target(key.proof("POST", URL, iat=clock.now(), nonce=nonce)))
    assert (await dpop.nonce_header(target("a proof")))["DPoP-Nonce"] != nonce
    clock.advance(300)  # two periods on: refused, with the current nonce
    with pytest.raises(UseDpopNonceError) as again:
        await dpop.check(target(key.proof("POST", URL, iat=clock.now(), nonce=nonce)))
    assert again.value.headers["DPoP-Nonce"] not in (nonce, "")


async def test_without_required_nonces_no_nonce_is_handed_out(key: DpopKey) -> None:
    dpop, _ = checker()
    assert await dpop.nonce_header(target(key.proof("POST", URL, iat=NOW))) == {}
    assert await dpop.check(target(key.proof("POST", URL, iat=NOW)))


async def _sender(dpop: DpopChecker, scheme: str, jkt: str | None, *proofs: str) -> None:
    await check_sender(dpop, scheme=scheme, token=TOKEN, jkt=jkt, target=target(*proofs, method="GET"))


async def test_a_resource_takes_a_bound_token_only_with_the_dpop_scheme_and_its_keys_proof(key: DpopKey) -> None:
    dpop, _ = checker()
    good = key.proof("GET", URL, iat=NOW, access_token=TOKEN)
    await _sender(dpop, "DPoP", key.jkt, good)
    with pytest.raises(InvalidTokenError, match="DPoP-bound"):
        await _sender(dpop, "Bearer", key.jkt, key.proof("GET", URL, iat=NOW, access_token=TOKEN))
    with pytest.raises(InvalidDpopProofError, match="required"):
        await _sender(dpop, "DPoP", key.jkt)
    with pytest.raises(InvalidDpopProofError, match="ath"):
        await _sender(dpop, "DPoP", key.jkt, key.proof("GET", URL, iat=NOW))
    other = DpopKey("ES256")
    with pytest.raises(InvalidTokenError, match="key the access token is bound to"):
        await _sender(dpop, "DPoP", key.jkt, other.proof("GET", URL, iat=NOW, access_token=TOKEN))


async def test_a_resource_takes_a_bearer_token_only_with_the_bearer_scheme(key: DpopKey) -> None:
    dpop, _ = checker()
    await _sender(dpop, "Bearer", None)
    with pytest.raises(InvalidTokenError, match="not DPoP-bound"):
        await _sender(dpop, "DPoP", None, key.proof("GET", URL, iat=NOW, access_token=TOKEN))


def test_the_confirmation_of_a_token_is_its_cnf_jkt(key: DpopKey) -> None:
    assert confirmation_jkt({"sub": "u1"}) is None
    assert confirmation_jkt({"cnf": {"jkt": key.jkt}}) == key.jkt
    for cnf in ({"x5t#S256": "abc"}, {"jkt": "short"}, "jkt", {"jkt": 5}):
        with pytest.raises(InvalidTokenError):
            confirmation_jkt({"cnf": cnf})


def test_the_key_in_a_proof_and_its_thumbprint_agree() -> None:
    ec = ECKey.generate_key("P-256")
    assert jwk_thumbprint(ec.as_dict(private=False)) == ec.thumbprint()
