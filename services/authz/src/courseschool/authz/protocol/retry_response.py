"""The response of a refresh-token rotation, kept for an immediate retry.

A client whose refresh response was lost in transit retries with the token it just
rotated; within a short window it gets the very same response back (RFC 9700
§4.14.2 allows this tolerance), so it is not logged out and no second lineage
appears. The response holds live tokens, so it is sealed with AES-256-GCM under a
key derived (HKDF-SHA256) from the old refresh token itself: the database alone,
which stores only a SHA-256 digest of that token, cannot open it.
"""

from __future__ import annotations

import os

import msgspec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .models import TokenResponse

_INFO = b"courseschool refresh replay v1"


def _key(refresh_token: str) -> AESGCM:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO)
    return AESGCM(hkdf.derive(refresh_token.encode()))


def seal(refresh_token: str, response: TokenResponse) -> bytes:
    nonce = os.urandom(12)
    return nonce + _key(refresh_token).encrypt(nonce, msgspec.json.encode(response), None)


def open_sealed(refresh_token: str, sealed: bytes) -> TokenResponse:
    plain = _key(refresh_token).decrypt(sealed[:12], sealed[12:], None)
    return msgspec.json.decode(plain, type=TokenResponse)
