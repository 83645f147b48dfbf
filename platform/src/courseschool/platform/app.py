"""Build the all-in-one ASGI app from the three services."""

from __future__ import annotations

from typing import Any, cast

import httpx
import msgspec

from courseschool.authz.app import create_app as create_authz
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.client_metadata import PUBLIC_WEB, DocumentWeb
from courseschool.common.settings import load_settings
from courseschool.common.web import forward_request_id
from courseschool.discovery.app import create_app as create_discovery
from courseschool.discovery.settings import DiscoverySettings
from courseschool.resource_api.app import create_app as create_resource
from courseschool.resource_api.settings import ResourceSettings

from .router import PathRouter


def build(
    shared: dict[str, Any], *, clock: Any = None, public_probes: bool = False, document_web: DocumentWeb = PUBLIC_WEB
) -> PathRouter:
    """The three apps behind one router; `shared` holds the settings all of them take
    (base_url, database_url, redis_url, internal_token, key_encryption_key, ...).
    /healthz, /readyz and /metrics need the internal token unless `public_probes`
    (the development `run`: /healthz and /readyz only). `document_web`: where the
    authorization server fetches Client ID Metadata Documents (the public web)."""
    authz_settings = load_settings(AuthzSettings, **shared)
    resource_later = _Later()  # authz reads activity from the resource API, made below
    to_resource = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=cast(Any, resource_later)),
        base_url="http://resource",
        event_hooks={"request": [forward_request_id]},
    )
    authz = create_authz(authz_settings, clock=clock, resource=to_resource, document_web=document_web)
    to_authz = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=cast(Any, authz)),
        base_url="http://authz",
        event_hooks={"request": [forward_request_id]},
    )
    resource = create_resource(load_settings(ResourceSettings, **_only(ResourceSettings, shared)), authz=to_authz)
    resource_later.app = resource
    upstreams = {
        "authz": to_authz,
        "resource": httpx.AsyncClient(
            transport=httpx.ASGITransport(app=cast(Any, resource)), base_url="http://resource"
        ),
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
        internal_token=authz_settings.internal_token,
        public_probes=public_probes,
    )


class _Later:
    """An ASGI app bound after it is referred to: two in-process apps that call each other."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _only(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in msgspec.structs.fields(cls)}
    return {k: v for k, v in values.items() if k in names}
