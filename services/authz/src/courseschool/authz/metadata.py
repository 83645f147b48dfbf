"""Authorization Server Metadata (RFC 8414 §2) and OpenID Provider Metadata (OIDC
Discovery 1.0 §3). Built from the settings and the scope registry; every endpoint,
grant type, auth method and scope this server supports is listed, and nothing else."""

from __future__ import annotations

from typing import Any

from courseschool.common.dpop import ALGORITHMS as DPOP_ALGORITHMS
from courseschool.common.scopes import ALL_SCOPE_NAMES

from .protocol.pkce import SUPPORTED_METHODS
from .protocol.registration import AUTH_METHODS, GRANT_TYPES, ID_TOKEN_ALGS, SECRET_METHODS
from .settings import AuthzSettings


def authorization_server_metadata(settings: AuthzSettings) -> dict[str, Any]:
    base = settings.base_url
    return {
        "issuer": settings.issuer,
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/api/oauth/token",
        "registration_endpoint": f"{base}/api/oauth/register",
        "jwks_uri": f"{base}/api/oauth/jwks",
        "userinfo_endpoint": f"{base}/api/oauth/userinfo",
        "revocation_endpoint": f"{base}/api/oauth/revoke",
        "end_session_endpoint": f"{base}/oauth/logout",
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "introspection_endpoint": f"{base}/api/oauth/introspect",
        # Only clients an administrator made may introspect: never `none`.
        "introspection_endpoint_auth_methods_supported": list(SECRET_METHODS),
        "scopes_supported": list(ALL_SCOPE_NAMES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "code_challenge_methods_supported": list(SUPPORTED_METHODS),
        "service_documentation": f"{base}/auth.md",
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": settings.cimd_enabled,
        "prompt_values_supported": ["none", "login", "consent", "select_account"],
        "dpop_signing_alg_values_supported": list(DPOP_ALGORITHMS),
    }


def openid_configuration(settings: AuthzSettings) -> dict[str, Any]:
    doc = authorization_server_metadata(settings)
    doc.update(
        {
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": list(ID_TOKEN_ALGS),
            "userinfo_signing_alg_values_supported": ["none"],
            "claims_supported": [
                "sub",
                "iss",
                "aud",
                "exp",
                "iat",
                "auth_time",
                "nonce",
                "at_hash",
                "azp",
                "name",
                "preferred_username",
                "email",
                "email_verified",
            ],
            "claims_parameter_supported": False,
            "request_parameter_supported": False,
            "request_uri_parameter_supported": False,
        }
    )
    return doc
