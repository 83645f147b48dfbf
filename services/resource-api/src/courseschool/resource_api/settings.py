"""Settings of the resource API (environment variables, upper-cased names)."""

from __future__ import annotations

from typing import Literal

from courseschool.common.settings import BaseSettings


class ResourceSettings(BaseSettings, kw_only=True, frozen=True):
    resource_name: str = "Course School API"
    # Where the authorization server answers (JWKS, introspection) from inside.
    authz_internal_url: str = "http://127.0.0.1:8001"
    # How bearer tokens are checked: "jwt" (locally, against the JWKS) or "introspection".
    token_validation: Literal["jwt", "introspection"] = "jwt"
    # This resource server's own confidential client, for introspection.
    rs_client_id: str | None = None
    rs_client_secret: str | None = None
    token_leeway: int = 30  # seconds of clock skew tolerated on exp / nbf
    jwks_refetch_interval: int = 5  # an unknown kid refetches the JWKS at most this often
    jwks_max_age: int = 300
    introspection_cache_ttl: int = 300  # never longer than the token lives
    page_size_default: int = 20
    page_size_max: int = 100
    # Seconds an anonymous catalogue page is kept and may be cached by clients (0: never).
    catalogue_cache_ttl: float = 2.0
    upload_max_bytes: int = 5 * 1024 * 1024
    # What each grant did (activity.py): reads counted in memory are flushed to Redis and
    # drained to PostgreSQL this often (seconds), at most this many rows per statement;
    # activity older than the retention is removed by the housekeeping pass, run this often.
    activity_flush_interval: float = 5.0
    activity_flush_batch: int = 1000
    activity_retention_days: int = 90
    housekeeping_interval: int = 300

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.token_leeway <= 300:
            raise ValueError("TOKEN_LEEWAY must be between 0 and 300 seconds")
        if not 0 <= self.catalogue_cache_ttl <= 300:
            raise ValueError("CATALOGUE_CACHE_TTL must be between 0 and 300 seconds")
        if not 0.1 <= self.activity_flush_interval <= 300:
            raise ValueError("ACTIVITY_FLUSH_INTERVAL must be between 0.1 and 300 seconds")
        if not 10 <= self.activity_flush_batch <= 10_000:
            raise ValueError("ACTIVITY_FLUSH_BATCH must be between 10 and 10000 rows")
        if not 1 <= self.activity_retention_days <= 3650:
            raise ValueError("ACTIVITY_RETENTION_DAYS must be between 1 and 3650 days")
        if not 1 <= self.housekeeping_interval <= 86400:
            raise ValueError("HOUSEKEEPING_INTERVAL must be between 1 and 86400 seconds")
        if not 1 <= self.page_size_default <= self.page_size_max <= 1000:
            raise ValueError("PAGE_SIZE_DEFAULT and PAGE_SIZE_MAX must satisfy 1 <= default <= max <= 1000")
