"""Protected Resource Metadata, RFC 9728 §2."""

from __future__ import annotations

from typing import Any

from courseschool.common.dpop import ALGORITHMS as DPOP_ALGORITHMS
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
        # RFC 9449 via RFC 9728 §2: DPoP-bound tokens are accepted, bearer tokens too.
        "dpop_signing_alg_values_supported": list(DPOP_ALGORITHMS),
        "dpop_bound_access_tokens_required": False,
    }
