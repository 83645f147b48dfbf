"""Settings read from the environment into msgspec Structs, in one place.

Every service declares a Struct subclassing `BaseSettings`; `load_settings` reads one
environment variable per field (the field name upper-cased), converts and validates
it, and raises `SettingsError` naming the variable on a missing or malformed value.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import msgspec

from .dpop import DpopPolicy
from .forwarded import TrustedProxies
from .redis import SentinelTarget, parse_sentinels

S = TypeVar("S", bound="BaseSettings")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]{16,}")


class SettingsError(Exception):
    """A setting is missing or malformed; the message names the variable."""


class BaseSettings(msgspec.Struct, kw_only=True, frozen=True):
    base_url: str = "http://127.0.0.1:8000"
    database_url: str | None = None
    redis_url: str | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["auto", "json", "console"] = "auto"
    # Shared secret that the services present to each other's /internal endpoints.
    internal_token: str | None = None
    db_pool_min: int = 0
    db_pool_max: int = 10
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated
    # addresses or networks, or "*": any peer, one hop); empty: nobody (forwarded.py).
    forwarded_allow_ips: str = ""
    # A throw-away demo (compose on a laptop, the dev cluster): the deployment files'
    # placeholder secrets are accepted. Anywhere else they stop start-up.
    dev: bool = False
    # DPoP (RFC 9449) at every service that checks proofs: how far a proof's iat may be
    # off this server's clock, either way; whether proofs must carry a server nonce, and
    # how often the nonce changes.
    dpop_proof_window: int = 60
    dpop_nonce_required: bool = False
    dpop_nonce_rotation: int = 300
    # Redis with Sentinel: the master's name as the sentinels know it, and the sentinels'
    # addresses (`host:port,host:port`); REDIS_URL then gives the database, credentials
    # and TLS (common/redis.py). Both unset: REDIS_URL names the one server. Sentinels
    # that ask for a password are given their own (and ACL user), and TLS is theirs to
    # speak or not, whatever the master does.
    redis_sentinel_master: str | None = None
    redis_sentinels: str = ""
    redis_sentinel_username: str | None = None
    redis_sentinel_password: str | None = None
    redis_sentinel_tls: bool = False

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("BASE_URL must be an absolute http(s) origin")
        if parts.path not in ("",) or parts.query or parts.fragment or self.base_url.endswith("/"):
            raise ValueError("BASE_URL must be an origin without path or trailing slash")
        TrustedProxies(self.forwarded_allow_ips)
        shipped = [f.name.upper() for f in msgspec.structs.fields(self) if is_placeholder(getattr(self, f.name))]
        if shipped and not self.dev:
            raise ValueError(
                f"{', '.join(shipped)}: the placeholder of the deployment files (change-me); "
                "set real secrets, or DEV=1 for a throw-away demo"
            )
        if not 5 <= self.dpop_proof_window <= 300:
            raise ValueError("DPOP_PROOF_WINDOW must be between 5 and 300 seconds")
        if not 30 <= self.dpop_nonce_rotation <= 86400:
            raise ValueError("DPOP_NONCE_ROTATION must be between 30 and 86400 seconds")
        self._check_sentinel()

    def _check_sentinel(self) -> None:
        if bool(self.redis_sentinel_master) != bool(self.redis_sentinels):
            raise ValueError("REDIS_SENTINEL_MASTER and REDIS_SENTINELS go together (Sentinel), or neither")
        how = [
            name
            for name, value in (
                ("REDIS_SENTINEL_USERNAME", self.redis_sentinel_username),
                ("REDIS_SENTINEL_PASSWORD", self.redis_sentinel_password),
                ("REDIS_SENTINEL_TLS", self.redis_sentinel_tls),
            )
            if value
        ]
        if how and not self.redis_sentinels:
            raise ValueError(f"{', '.join(how)}: how the sentinels are asked, without REDIS_SENTINELS to ask")
        if self.redis_sentinel_username and not self.redis_sentinel_password:
            raise ValueError("REDIS_SENTINEL_USERNAME needs REDIS_SENTINEL_PASSWORD (an ACL user signs in with both)")
        if self.redis_sentinels:
            parse_sentinels(self.redis_sentinels)
            # Without REDIS_URL: a process that uses no Redis (the migration step) may share
            # the settings; one that does requires REDIS_URL itself.
            if self.redis_url and not self.redis_url.startswith(("redis://", "rediss://")):
                raise ValueError(
                    "REDIS_URL: with Sentinel, a redis:// or rediss:// URL (the sentinels give the address)"
                )

    @property
    def issuer(self) -> str:
        return self.base_url

    @property
    def redis_sentinel(self) -> SentinelTarget | None:
        """Where the sentinels are, or None: REDIS_URL is the server (common/redis.py)."""
        if not self.redis_sentinel_master:
            return None
        return SentinelTarget(
            self.redis_sentinel_master,
            parse_sentinels(self.redis_sentinels),
            username=self.redis_sentinel_username or None,
            password=self.redis_sentinel_password or None,
            tls=self.redis_sentinel_tls,
        )

    @property
    def dpop_policy(self) -> DpopPolicy:
        return DpopPolicy(
            window=self.dpop_proof_window,
            nonce_required=self.dpop_nonce_required,
            nonce_rotation=self.dpop_nonce_rotation,
        )


def is_placeholder(value: object) -> bool:
    """A placeholder the deployment files ship (deploy/compose.yaml, the dev overlay's
    secrets.example.env): a value saying "change-me", or the base64url of a text that does
    (their key-encryption key), wherever it appears (a password inside DATABASE_URL too)."""
    if not isinstance(value, str):
        return False
    if "change-me" in value.lower():
        return True
    if not _BASE64URL.fullmatch(value):
        return False
    try:
        return b"change-me" in base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).lower()
    except (binascii.Error, ValueError):
        return False


def load_settings(cls: type[S], environ: Mapping[str, str] | None = None, **overrides: Any) -> S:
    """Build `cls` from the environment (plus explicit overrides), validating every field."""
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    for field in msgspec.structs.fields(cls):
        value = env.get(field.name.upper())
        if value is not None and value != "":
            raw[field.name] = value
    raw.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return msgspec.convert(raw, cls, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(_describe(exc)) from None
    except ValueError as exc:  # raised by __post_init__ checks
        raise SettingsError(f"invalid setting: {exc}") from None


def _describe(exc: msgspec.ValidationError) -> str:
    message = str(exc)
    # msgspec says "... - at `$.field_name`"; name the environment variable instead.
    if "`$." in message:
        head, _, path = message.partition(" - at `$.")
        name = path.rstrip("`").split(".")[0].split("[")[0]
        return f"{name.upper()}: {head}"
    return message
