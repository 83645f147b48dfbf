"""Build the all-in-one ASGI app from the three services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from courseschool.authz.settings import AuthzSettings
from courseschool.authz.web.app import create_app as create_authz
from courseschool.common.settings import load_settings
from courseschool.common.web import forward_request_id
from courseschool.discovery.app import create_app as create_discovery
from courseschool.discovery.settings import DiscoverySettings
from courseschool.resource_api.app import create_app as create_resource
from courseschool.resource_api.settings import ResourceSettings

from .router import PathRouter

from courseschool.resource_api.app import MIGRATIONS as RESOURCE_MIGRATIONS

AUTHZ_MIGRATIONS = Path(__import__("courseschool.authz", fromlist=["_"]).__file__).parent / "migrations"
MIGRATIONS: list[tuple[str, Path]] = [("authz", AUTHZ_MIGRATIONS), ("resource_api", RESOURCE_MIGRATIONS)]


def build(shared: dict[str, Any], *, clock: Any = None) -> PathRouter:
    """The three apps behind one router; `shared` holds the settings all of them take
    (base_url, database_url, redis_url, internal_token, key_encryption_key, ...)."""
    authz = create_authz(load_settings(AuthzSettings, **shared), clock=clock)
    to_authz = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=authz), base_url="http://authz",
        event_hooks={"request": [forward_request_id]},
    )
    resource = create_resource(load_settings(ResourceSettings, **_only(ResourceSettings, shared)), authz=to_authz)
    upstreams = {
        "authz": to_authz,
        "resource": httpx.AsyncClient(transport=httpx.ASGITransport(app=resource), base_url="http://resource"),
    }
    discovery = create_discovery(
        load_settings(DiscoverySettings, **_only(DiscoverySettings, shared)), upstreams=upstreams
    )
    return PathRouter(
        [
            ("/oauth/", authz),
            ("/api/oauth/", authz),
            ("/api/v1/", resource),
            ("/.well-known/", discovery),
            ("/openapi.json", discovery),
            ("/auth.md", discovery),
        ],
        default=authz,
    )


def _only(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    import msgspec

    names = {f.name for f in msgspec.structs.fields(cls)}
    return {k: v for k, v in values.items() if k in names}
