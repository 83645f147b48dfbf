"""DPoP, RFC 9449: the rules of a proof, one module for the authorization server (token
endpoint, UserInfo) and the resource API.

- `verify_proof`: the stateless checks of §4.3 on one `DPoP` header value: a JWS with
  `typ: dpop+jwt`, an asymmetric `alg` of `ALGORITHMS` (never `none`, never a MAC),
  verified with the public key of its own `jwk` header and only that key; `htm`; `htu`
  compared after RFC 3986 normalisation, query and fragment ignored; `iat` within the
  window; `ath` (§4.2, the hash of the access token) at protected resources.
- `DpopChecker`: those, plus what needs state: exactly one header, the server nonce
  (§8, §9) when nonces are required, and the `jti` replay cache (§11.1), keyed by the
  proof key's thumbprint. The state sits behind the `DpopStore` port
  (`courseschool.common.dpop_store`: Redis, with this process's memory as a fallback).
- `check_sender`: a protected resource's rule (§7.1, §7.2): a bound access token
  (`cnf.jkt`, §6.1) comes with the DPoP scheme and a proof made with its key; an
  unbound one never with the DPoP scheme.

JWS, JWK and thumbprints (RFC 7638) are joserfc's.
"""

from __future__ import annotations

import base64
import hashlib
import re
import warnings
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec
from joserfc import jws
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import Key, RSAKey, import_key

from .clock import Clock
from .errors import InvalidDpopProofError, InvalidTokenError, UseDpopNonceError
from .jsonbody import decode_json
from .uris import comparable_uri

SCHEME = "DPoP"
ALGORITHMS = ("ES256", "Ed25519", "EdDSA", "RS256", "PS256")
PROOF_TYP = "dpop+jwt"
MAX_PROOF = 8192
_NOT_AN_OBJECT = "the DPoP proof's payload is not a JSON object"
MAX_JTI = 512
MIN_RSA_BITS = 2048
NONCE_HEADER = "DPoP-Nonce"

# The key type (and curve) each algorithm verifies with.
_KEY_TYPES: dict[str, tuple[str, str | None]] = {
    "ES256": ("EC", "P-256"),
    "Ed25519": ("OKP", "Ed25519"),
    "EdDSA": ("OKP", "Ed25519"),
    "RS256": ("RSA", None),
    "PS256": ("RSA", None),
}
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_THUMBPRINT = re.compile(r"^[A-Za-z0-9_-]{43}$")  # base64url of a SHA-256 digest

# Clients still name Ed25519 signatures "EdDSA", which joserfc flags as superseded by
# "Ed25519" (RFC 9864) on every verification; both are accepted here.
warnings.filterwarnings("ignore", message="EdDSA is deprecated", category=SecurityWarning)

_REGISTRY = jws.JWSRegistry(algorithms=list(ALGORITHMS), strict_check_header=False)
_REGISTRY.max_header_length = 4096  # an RSA key in `jwk` outgrows joserfc's 512 bytes


class Proof(msgspec.Struct, frozen=True, kw_only=True):
    """A proof that passed the checks of §4.3."""

    jkt: str  # the RFC 7638 thumbprint of its key
    jti: str
    iat: int
    nonce: str | None = None


class ProofTarget(msgspec.Struct, frozen=True, kw_only=True):
    """The request a proof must match: its method, its URI as the client addressed it
    (the public origin and the path), and the values of its `DPoP` header fields."""

    method: str
    url: str
    proofs: tuple[str, ...] = ()


class DpopPolicy(msgspec.Struct, frozen=True, kw_only=True):
    window: int = 60  # seconds `iat` may be off the server's clock, either way (§11.1)
    nonce_required: bool = False
    nonce_rotation: int = 300  # a nonce is good for this long, and the next period too


class DpopStore(Protocol):
    async def first_use(self, key: str, ttl: int) -> bool:
        """Record `key` for `ttl` seconds; False when it was recorded already (a replay)."""

    async def nonce(self, window: int, ttl: int) -> str:
        """The nonce of time period number `window`, made on first ask, the same for every
        replica."""


def access_token_hash(access_token: str) -> str:
    """§4.2 `ath`: base64url (no padding) of the SHA-256 of the ASCII access token."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 with SHA-256, the `jkt` of §6.1 and `dpop_jkt` of §10."""
    return import_key(dict(jwk)).thumbprint()


def is_thumbprint(value: str) -> bool:
    """The form of a SHA-256 JWK thumbprint (`dpop_jkt`, `cnf.jkt`)."""
    return bool(_THUMBPRINT.match(value))


def confirmation_jkt(claims: Mapping[str, Any]) -> str | None:
    """The key an access token is bound to (`cnf.jkt`, §6.1); None for a bearer token."""
    cnf = claims.get("cnf")
    if cnf is None:
        return None
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    if not isinstance(jkt, str) or not is_thumbprint(jkt):
        raise InvalidTokenError("the access token's confirmation (cnf) is not a DPoP key thumbprint")
    return jkt


def _invalid(description: str) -> InvalidDpopProofError:
    return InvalidDpopProofError(description)


def _embedded_key(jwk: Any, alg: str) -> Key:
    """§4.3 checks 6 and 7: the proof's own public key, of the type its `alg` needs."""
    if not isinstance(jwk, dict):
        raise _invalid("the DPoP proof must carry its public key in the jwk header")
    if _PRIVATE_MEMBERS & jwk.keys():
        raise _invalid("the DPoP proof's jwk must not hold a private key")
    kty, crv = _KEY_TYPES[alg]
    if jwk.get("kty") != kty or (crv is not None and jwk.get("crv") != crv):
        raise _invalid(f"alg {alg} needs a {kty} key" + (f" on {crv}" if crv else ""))
    if kty == "RSA" and len(str(jwk.get("n", ""))) * 3 // 4 < MIN_RSA_BITS // 8:  # before the import's cost
        raise _invalid(f"the DPoP proof's RSA key must have at least {MIN_RSA_BITS} bits")
    try:
        key = import_key(jwk)
    except (JoseError, ValueError, TypeError, KeyError):
        raise _invalid("the DPoP proof's jwk is not a valid public key") from None
    if isinstance(key, RSAKey) and key.public_key.key_size < MIN_RSA_BITS:
        raise _invalid(f"the DPoP proof's RSA key must have at least {MIN_RSA_BITS} bits")
    return key


def _signed_claims(value: str) -> tuple[dict[str, Any], Key]:
    """§4.3 checks 2 and 4 to 7: a JWS whose header is right, verified with its `jwk`."""
    if len(value) > MAX_PROOF or not value.isascii():
        raise _invalid("the DPoP proof is not a compact JWS")
    try:
        signed = jws.extract_compact(value.encode("ascii"), registry=_REGISTRY)
    except (JoseError, ValueError, TypeError):
        raise _invalid("the DPoP proof is not a compact JWS") from None
    header = signed.headers()
    if str(header.get("typ", "")).lower() not in (PROOF_TYP, f"application/{PROOF_TYP}"):
        raise _invalid(f"the DPoP proof's typ must be {PROOF_TYP}")
    alg = header.get("alg")
    if alg not in _KEY_TYPES:
        raise _invalid(f"the DPoP proof's alg must be one of {' '.join(ALGORITHMS)}")
    if "crit" in header or "b64" in header:
        raise _invalid("the DPoP proof's header holds parameters this server does not process")
    key = _embedded_key(header.get("jwk"), alg)
    try:
        verified = jws.validate_compact(signed, key, registry=_REGISTRY)
    except (JoseError, ValueError, TypeError):
        verified = False
    if not verified:
        raise _invalid("the DPoP proof's signature does not verify with its jwk")
    claims = decode_json(signed.payload, invalid=lambda _: _invalid(_NOT_AN_OBJECT), max_bytes=MAX_PROOF)
    if not isinstance(claims, dict):
        raise _invalid(_NOT_AN_OBJECT)
    return claims, key


def verify_proof(value: str, *, method: str, url: str, now: int, window: int, access_token: str | None = None) -> Proof:
    """§4.3 checks 2 to 9, 11 and 12 on one proof; the nonce (10) and replay are the
    checker's. `url` is the request's URI as the client addressed it."""
    claims, key = _signed_claims(value)
    jti = claims.get("jti")
    if not isinstance(jti, str) or not 0 < len(jti) <= MAX_JTI:
        raise _invalid(f"the DPoP proof needs a jti of 1 to {MAX_JTI} characters")
    if claims.get("htm") != method:
        raise _invalid(f"the DPoP proof's htm is not {method}, this request's method")
    htu = claims.get("htu")
    expected = comparable_uri(url)
    if not isinstance(htu, str) or expected is None or comparable_uri(htu) != expected:
        raise _invalid(f"the DPoP proof's htu is not {expected}, this request's URI")
    iat = claims.get("iat")
    if not isinstance(iat, int | float) or isinstance(iat, bool) or abs(now - iat) > window:
        raise _invalid(f"the DPoP proof's iat is not within {window} seconds of the server's time")
    if access_token is not None and claims.get("ath") != access_token_hash(access_token):
        raise _invalid("the DPoP proof's ath is not the hash of the access token sent with it")
    nonce = claims.get("nonce")
    return Proof(jkt=key.thumbprint(), jti=jti, iat=int(iat), nonce=nonce if isinstance(nonce, str) else None)


def replay_ttl(iat: int, *, now: int, window: int) -> int:
    """How long a proof's `jti` is remembered (§11.1): for as long as the proof could be
    accepted again. `verify_proof` takes it while `abs(now - iat) <= window` on a clock
    of whole seconds, that is through the whole second `iat + window` (`iat` rounded
    down, as `Proof.iat` is), which ends `iat + window + 1 - now` seconds after the
    start of the second `now`. The store counts from a moment within that second, so
    this many seconds cover it whatever part of it has gone; never less than 1."""
    return max(1, iat + window + 1 - now)


class DpopChecker:
    """Proofs checked against the request, the nonce and the replay cache (§4.3, §8, §11.1)."""

    def __init__(self, store: DpopStore, policy: DpopPolicy, clock: Clock) -> None:
        self._store = store
        self.policy = policy
        self._clock = clock
        self._nonces: dict[int, str] = {}  # nonce period -> nonce, this process's copy

    async def check(self, target: ProofTarget, *, access_token: str | None = None) -> Proof:
        """Exactly one proof (§4.3 check 1), valid for this request, carrying the current
        nonce when nonces are required, and never used before."""
        if len(target.proofs) != 1:
            raise _invalid(
                "send exactly one DPoP header" if target.proofs else "a DPoP proof (DPoP header) is required"
            )
        now = self._clock.now()
        proof = verify_proof(
            target.proofs[0],
            method=target.method,
            url=target.url,
            now=now,
            window=self.policy.window,
            access_token=access_token,
        )
        if self.policy.nonce_required:
            await self._check_nonce(proof.nonce, now)
        seen = f"{proof.jkt}:{hashlib.sha256(proof.jti.encode()).hexdigest()[:32]}"
        if not await self._store.first_use(seen, replay_ttl(proof.iat, now=now, window=self.policy.window)):
            raise _invalid("the DPoP proof was used before: make a new proof (a new jti) for every request")
        return proof

    async def nonce_header(self, target: ProofTarget) -> dict[str, str]:
        """`DPoP-Nonce` for the answer to a request that carried a proof (§8.2), when
        nonces are required; nothing otherwise."""
        if not self.policy.nonce_required or not target.proofs:
            return {}
        return {NONCE_HEADER: await self._nonce(self._clock.now() // self.policy.nonce_rotation)}

    async def _check_nonce(self, given: str | None, now: int) -> None:
        period = now // self.policy.nonce_rotation
        current = await self._nonce(period)
        if given is not None and given in (current, await self._nonce(period - 1)):
            return
        err = UseDpopNonceError("the DPoP proof must carry the server's nonce: use the DPoP-Nonce of this answer")
        err.headers[NONCE_HEADER] = current
        raise err

    async def _nonce(self, period: int) -> str:
        nonce = self._nonces.get(period)
        if nonce is None:
            nonce = await self._store.nonce(period, 3 * self.policy.nonce_rotation)
            self._nonces = {p: n for p, n in self._nonces.items() if p >= period - 1}
            self._nonces[period] = nonce
        return nonce


async def check_sender(checker: DpopChecker, *, scheme: str, token: str, jkt: str | None, target: ProofTarget) -> None:
    """A protected resource (§7.1, §7.2): a bound token needs the DPoP scheme and a
    proof with `ath`, made with the key of `cnf.jkt`; a bearer token never comes with the
    DPoP scheme. Raises InvalidTokenError, InvalidDpopProofError or UseDpopNonceError."""
    if jkt is None:
        if scheme == SCHEME:
            raise InvalidTokenError("the access token is not DPoP-bound: send it with the Bearer scheme")
        return
    if scheme != SCHEME:
        raise InvalidTokenError("the access token is DPoP-bound: send it as 'Authorization: DPoP' with a DPoP proof")
    proof = await checker.check(target, access_token=token)
    if proof.jkt != jkt:
        raise InvalidTokenError("the DPoP proof is not made with the key the access token is bound to")
