"""Protected Resource Metadata, RFC 9728 §2."""

from __future__ import annotations

from typing import Any

from courseschool.common.dpop import ALGORITHMS as DPOP_ALGORITHMS
from courseschool.common.resource import canonical_resource
from courseschool.common.scopes import BASIC_SCOPES

from .settings import ResourceSettings


def protected_resource_metadata(settings: ResourceSettings) -> dict[str, Any]:
    return {
        "resource": canonical_resource(settings.base_url),
        "authorization_servers": [settings.issuer],
        # §2: "scopes ... used in authorization requests to request access to this
        # resource": the minimal set a client asks for first (BASIC_SCOPES); writes come
        # through the 403 insufficient_scope challenge, which names the scope.
        "scopes_supported": list(BASIC_SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": settings.resource_name,
        "resource_documentation": f"{settings.base_url}/auth.md",
        # RFC 9449 via RFC 9728 §2: DPoP-bound tokens are accepted, bearer tokens too.
        "dpop_signing_alg_values_supported": list(DPOP_ALGORITHMS),
        "dpop_bound_access_tokens_required": False,
    }
