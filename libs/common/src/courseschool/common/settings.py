"""Settings read from the environment into msgspec Structs, in one place.

Every service declares a Struct subclassing `BaseSettings`; `load_settings` reads one
environment variable per field (the field name upper-cased), converts and validates
it, and raises `SettingsError` naming the variable on a missing or malformed value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import msgspec

S = TypeVar("S", bound="BaseSettings")


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
    # Peers whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated
    # addresses or networks, or "*" behind a proxy that overwrites the header).
    forwarded_allow_ips: str = "127.0.0.1"

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("BASE_URL must be an absolute http(s) origin")
        if parts.path not in ("",) or parts.query or parts.fragment or self.base_url.endswith("/"):
            raise ValueError("BASE_URL must be an origin without path or trailing slash")

    @property
    def issuer(self) -> str:
        return self.base_url


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
