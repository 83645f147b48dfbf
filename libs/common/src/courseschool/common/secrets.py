"""Random values and their digests.

Codes, refresh tokens, session ids and client secrets carry 256 bits of entropy, so a
plain SHA-256 digest is enough to store them (no password-hashing cost is needed),
and checks take microseconds. Comparisons are constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


def same(a: str | bytes, b: str | bytes) -> bool:
    if isinstance(a, str):
        a = a.encode()
    if isinstance(b, str):
        b = b.encode()
    return hmac.compare_digest(a, b)
