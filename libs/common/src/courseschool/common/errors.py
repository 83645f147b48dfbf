"""OAuth 2.0 errors: one class per error code, rendered in one place.

RFC 6749 §5.2 (token endpoint), §4.1.2.1 (authorization response), RFC 6750 §3.1
(bearer token errors), RFC 7591 §3.2.2 (registration), RFC 8707 §2 (invalid_target).
The description is meant for the client; internal detail belongs in the log.
"""

from __future__ import annotations

from typing import ClassVar


class OAuthError(Exception):
    error: ClassVar[str] = "server_error"
    status_code: ClassVar[int] = 400

    def __init__(self, description: str = "", *, scope: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        # For insufficient_scope: the scope the request needed (RFC 6750 §3).
        self.scope = scope
        # Extra response headers the web layer adds (a bearer challenge, Retry-After).
        self.headers: dict[str, str] = {}

    def body(self) -> dict[str, str]:
        out = {"error": self.error}
        if self.description:
            out["error_description"] = self.description
        if self.scope:
            out["scope"] = self.scope
        return out


class InvalidRequestError(OAuthError):
    error = "invalid_request"


class InvalidClientError(OAuthError):
    error = "invalid_client"
    status_code = 401


class InvalidGrantError(OAuthError):
    error = "invalid_grant"


class UnauthorizedClientError(OAuthError):
    error = "unauthorized_client"


class UnsupportedGrantTypeError(OAuthError):
    error = "unsupported_grant_type"


class UnsupportedResponseTypeError(OAuthError):
    error = "unsupported_response_type"


class InvalidScopeError(OAuthError):
    error = "invalid_scope"


class InvalidTargetError(OAuthError):
    error = "invalid_target"


class AccessDeniedError(OAuthError):
    error = "access_denied"
    status_code = 403


class LoginRequiredError(OAuthError):
    error = "login_required"


class ConsentRequiredError(OAuthError):
    error = "consent_required"


class RequestNotSupportedError(OAuthError):
    error = "request_not_supported"  # OIDC Core §3.1.2.6


class RequestUriNotSupportedError(OAuthError):
    error = "request_uri_not_supported"


class InvalidRedirectUriError(OAuthError):
    error = "invalid_redirect_uri"


class InvalidClientMetadataError(OAuthError):
    error = "invalid_client_metadata"


class InvalidTokenError(OAuthError):
    error = "invalid_token"
    status_code = 401


class InsufficientScopeError(OAuthError):
    error = "insufficient_scope"
    status_code = 403


class NotFoundError(OAuthError):
    error = "not_found"
    status_code = 404


class ConflictError(OAuthError):
    error = "conflict"
    status_code = 409


class ValidationFailedError(OAuthError):
    """The body is well-formed JSON but breaks the resource's schema or rules."""

    error = "validation_failed"
    status_code = 422


class PayloadTooLargeError(OAuthError):
    error = "request_too_large"
    status_code = 413


class UnsupportedMediaTypeError(OAuthError):
    error = "unsupported_media_type"
    status_code = 415


class TooManyRequestsError(OAuthError):
    error = "too_many_requests"
    status_code = 429

    def __init__(self, description: str, *, retry_after: int) -> None:
        super().__init__(description)
        self.retry_after = retry_after
        self.headers["Retry-After"] = str(retry_after)


class ServerError(OAuthError):
    error = "server_error"
    status_code = 500


class TemporarilyUnavailableError(OAuthError):
    error = "temporarily_unavailable"
    status_code = 503


def bearer_challenge(err: OAuthError | None, resource_metadata: str) -> str:
    """The `WWW-Authenticate` value of RFC 6750 §3 with RFC 9728 §5.1 `resource_metadata`."""
    params: list[tuple[str, str]] = []
    if err is not None:
        params.append(("error", err.error))
        if err.description:
            params.append(("error_description", err.description))
        if err.scope:
            params.append(("scope", err.scope))
    params.append(("resource_metadata", resource_metadata))
    quoted = ", ".join(f'{k}="{_quote(v)}"' for k, v in params)
    return f"Bearer {quoted}"


def _quote(value: str) -> str:
    # RFC 9110 §5.6.4 quoted-string: escape backslash and double quote, drop controls.
    cleaned = "".join(ch for ch in value if ch >= " " and ch != "\x7f")
    return cleaned.replace("\\", "\\\\").replace('"', '\\"')
