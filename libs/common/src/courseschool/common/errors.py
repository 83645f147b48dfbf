r"""The errors the platform answers with, one class per code.

Two families share one JSON shape, `{"error", "error_description"}` (RFC 6749 §5.2):
- `OAuthError`: the codes the OAuth and OpenID Connect specifications define, each
  class carrying its specification's text and its status code as data;
- `ApiError`: the platform's own codes for what those specifications do not cover
  (not found, conflict, validation, limits).

`description` is for the client, and is checked where the error is made: RFC 6749 §5.2
allows only %x20-21 / %x23-5B / %x5D-7E in `error_description` (printable ASCII
without `"` and `\`), so text outside that set raises `ValueError` at once (and fails
the test that reaches it) rather than leaving a server that sends it. Text a caller
sent, quoted in a description, goes through `fit_description` first. `detail` is for the
log only and never reaches the client (fosite's debug text). `advice`, where set, tells a person at a page what
to do next (the pages of the authorization server show it; JSON never carries it).
How an error is answered (JSON, an HTML page, or a redirect to the client) is decided
in one place: `courseschool.common.answers`.
"""

from __future__ import annotations

import re

# RFC 6749 §5.2 (and §4.1.2.1, §4.2.2.1): error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ).
_OUTSIDE = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")


def invalid_description_characters(text: str) -> list[str]:
    """The characters of `text` that RFC 6749 §5.2 does not allow in `error_description`."""
    return sorted(set(_OUTSIDE.findall(text)))


def fit_description(text: str) -> str:
    """Text a caller sent (a parameter, a field name, a validator's message quoting the
    document), made fit to quote in a description: each character RFC 6749 §5.2 does not
    allow becomes `?`."""
    return _OUTSIDE.sub("?", text)


def _checked(description: str) -> str:
    bad = invalid_description_characters(description)
    if bad:
        raise ValueError(f"error_description has characters RFC 6749 §5.2 does not allow: {bad!r} in {description!r}")
    return description


class PlatformError(Exception):
    """An error answered to the caller."""

    error = "server_error"
    status_code = 400

    def __init__(self, description: str = "", *, detail: str | None = None, advice: str | None = None) -> None:
        super().__init__(description)
        self.description = _checked(description)
        self.detail = detail
        self.advice = advice
        # Extra response headers (a bearer challenge, Retry-After).
        self.headers: dict[str, str] = {}

    def body(self) -> dict[str, str]:
        out = {"error": self.error}
        if self.description:
            out["error_description"] = self.description
        return out


# -- OAuth 2.0 and OpenID Connect codes -------------------------------------------------


class OAuthError(PlatformError):
    """A code defined by RFC 6749, RFC 6750, RFC 7591, RFC 8707 or OpenID Connect Core."""


class InvalidRequestError(OAuthError):
    """RFC 6749 §5.2: the request is missing a required parameter, includes an
    unsupported parameter value, repeats a parameter, or is otherwise malformed."""

    error = "invalid_request"


class InvalidClientError(OAuthError):
    """RFC 6749 §5.2: client authentication failed (unknown client, no client
    authentication included, or unsupported authentication method)."""

    error = "invalid_client"
    status_code = 401


class InvalidGrantError(OAuthError):
    """RFC 6749 §5.2: the authorization grant or refresh token is invalid, expired,
    revoked, does not match the redirection URI, or was issued to another client."""

    error = "invalid_grant"


class UnauthorizedClientError(OAuthError):
    """RFC 6749 §5.2: the client is not authorized to use this grant type."""

    error = "unauthorized_client"


class UnsupportedGrantTypeError(OAuthError):
    """RFC 6749 §5.2: the grant type is not supported by the authorization server."""

    error = "unsupported_grant_type"


class UnsupportedResponseTypeError(OAuthError):
    """RFC 6749 §4.1.2.1: the server does not support obtaining a code this way."""

    error = "unsupported_response_type"


class InvalidScopeError(OAuthError):
    """RFC 6749 §5.2: the requested scope is invalid, unknown, malformed, or exceeds
    the scope granted by the resource owner."""

    error = "invalid_scope"


class InvalidTargetError(OAuthError):
    """RFC 8707 §2: the requested resource is invalid, missing, unknown, or malformed."""

    error = "invalid_target"


class AccessDeniedError(OAuthError):
    """RFC 6749 §4.1.2.1: the resource owner or authorization server denied the request."""

    error = "access_denied"
    status_code = 403


class LoginRequiredError(OAuthError):
    """OIDC Core §3.1.2.6: the server requires the user to sign in (prompt=none)."""

    error = "login_required"


class ConsentRequiredError(OAuthError):
    """OIDC Core §3.1.2.6: the server requires the user's consent (prompt=none)."""

    error = "consent_required"


class RequestNotSupportedError(OAuthError):
    """OIDC Core §3.1.2.6: the `request` parameter is not supported."""

    error = "request_not_supported"


class RequestUriNotSupportedError(OAuthError):
    """OIDC Core §3.1.2.6: the `request_uri` parameter is not supported."""

    error = "request_uri_not_supported"


class InvalidRedirectUriError(OAuthError):
    """RFC 7591 §3.2.2: a redirection URI of the registration request is invalid."""

    error = "invalid_redirect_uri"


class InvalidClientMetadataError(OAuthError):
    """RFC 7591 §3.2.2: a client metadata field is invalid."""

    error = "invalid_client_metadata"


class InvalidTokenError(OAuthError):
    """RFC 6750 §3.1: the access token is expired, revoked, malformed, or invalid."""

    error = "invalid_token"
    status_code = 401


class InsufficientScopeError(OAuthError):
    """RFC 6750 §3.1: the request requires higher privileges than the access token
    provides; `scope` names every scope the operation needs."""

    error = "insufficient_scope"
    status_code = 403

    def __init__(self, description: str = "", *, scope: str, detail: str | None = None) -> None:
        super().__init__(description, detail=detail)
        self.scope = scope

    def body(self) -> dict[str, str]:
        return {**super().body(), "scope": self.scope}


class InvalidDpopProofError(OAuthError):
    """RFC 9449 §5 and §7.1 (registered in §12.2): the DPoP proof is missing, malformed or
    fails a check of §4.3. 400 at the token endpoint; a protected resource answers 401
    with a `DPoP` challenge (`courseschool.common.bearer`)."""

    error = "invalid_dpop_proof"


class UseDpopNonceError(OAuthError):
    """RFC 9449 §8 and §9: the server wants a nonce in the DPoP proof; the `DPoP-Nonce`
    response header holds the one to use. 400 at the token endpoint, 401 at a protected
    resource."""

    error = "use_dpop_nonce"


class ServerError(OAuthError):
    """RFC 6749 §4.1.2.1: an unexpected condition prevented the server from answering."""

    error = "server_error"
    status_code = 500


class TemporarilyUnavailableError(OAuthError):
    """RFC 6749 §4.1.2.1: the server cannot handle the request now (overload, or a
    backing service is down); try again shortly."""

    error = "temporarily_unavailable"
    status_code = 503


# -- the platform's own codes -------------------------------------------------------------


class ApiError(PlatformError):
    """A code of this platform's API, in the same shape as the OAuth errors."""


class ForbiddenError(ApiError):
    """The request was understood and is refused (a form sent from elsewhere)."""

    error = "forbidden"
    status_code = 403


class NotFoundError(ApiError):
    error = "not_found"
    status_code = 404


class MethodNotAllowedError(ApiError):
    error = "method_not_allowed"
    status_code = 405


class ConflictError(ApiError):
    error = "conflict"
    status_code = 409


class PayloadTooLargeError(ApiError):
    error = "request_too_large"
    status_code = 413


class UnsupportedMediaTypeError(ApiError):
    error = "unsupported_media_type"
    status_code = 415


class ValidationFailedError(ApiError):
    """The body is well-formed JSON but breaks the resource's schema or rules. The
    description is the validator's message, which quotes the caller's document (a field
    name it does not know, a value): it is made fit here, once, for every caller."""

    error = "validation_failed"
    status_code = 422

    def __init__(self, description: str = "", *, detail: str | None = None, advice: str | None = None) -> None:
        super().__init__(fit_description(description), detail=detail, advice=advice)


class TooManyRequestsError(ApiError):
    """RFC 6585 §4, with `Retry-After` (RFC 9110 §10.2.3)."""

    error = "too_many_requests"
    status_code = 429

    def __init__(self, description: str, *, retry_after: int, detail: str | None = None) -> None:
        super().__init__(description, detail=detail)
        self.retry_after = retry_after
        self.headers["Retry-After"] = str(retry_after)


# -- errors answered by a redirect ----------------------------------------------------------


class RedirectError(Exception):
    """An OAuth error answered by sending the browser back to the client's redirect
    URI, which has been validated (RFC 6749 §4.1.2.1). `location(issuer)` is the URL."""

    def __init__(self, error: OAuthError) -> None:
        super().__init__(error.description)
        self.error = error

    def location(self, issuer: str) -> str:
        raise NotImplementedError
