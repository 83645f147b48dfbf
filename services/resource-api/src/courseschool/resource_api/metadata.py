"""Protected Resource Metadata, RFC 9728 §2."""

from __future__ import annotations

from typing import Any

from courseschool.common.resource import canonical_resource
from courseschool.common.scopes import ALL_SCOPE_NAMES

from .settings import ResourceSettings


def protected_resource_metadata(settings: ResourceSettings) -> dict[str, Any]:
    return {
        "resource": canonical_resource(settings.base_url),
        "authorization_servers": [settings.issuer],
        "scopes_supported": list(ALL_SCOPE_NAMES),
        "bearer_methods_supported": ["header"],
        "resource_name": settings.resource_name,
        "resource_documentation": f"{settings.base_url}/auth.md",
    }
