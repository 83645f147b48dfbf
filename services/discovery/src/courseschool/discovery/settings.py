"""Settings of the discovery service (environment variables, upper-cased names)."""

from __future__ import annotations

from courseschool.common.settings import BaseSettings


class DiscoverySettings(BaseSettings, kw_only=True, frozen=True):
    authz_internal_url: str = "http://127.0.0.1:8001"
    resource_internal_url: str = "http://127.0.0.1:8002"
    # How long a fetched document is served before it is fetched again.
    metadata_cache_ttl: int = 60
