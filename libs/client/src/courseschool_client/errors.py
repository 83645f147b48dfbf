"""What can go wrong, each with a sentence a person can act on.

Every error of the library is a `ClientError`; a command-line front prints its message
and exits. No message ever holds a token."""

from __future__ import annotations


class ClientError(Exception):
    """Something the person or the tool author can act on; the message says what."""


class DiscoveryError(ClientError):
    """The base URL does not describe a Course School (RFC 9728 / RFC 8414 documents)."""


class SignInRequired(ClientError):
    """No usable sign-in: none stored, or the stored one was revoked or has expired."""

    def __init__(self, base_url: str, why: str) -> None:
        super().__init__(f"{why}: sign in again (courseschool-client login {base_url})")
        self.base_url = base_url


class AuthorizationRefused(ClientError):
    """The browser came back without a usable code: the person denied, or the answer
    was not for this sign-in (wrong `state`, wrong `iss`)."""


class StoreCorrupted(ClientError):
    """The stored sign-in cannot be read; `logout` forgets it, `login` replaces it."""


class TokenEndpointError(ClientError):
    """The authorization server refused a token request (RFC 6749 §5.2)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error = error
        self.description = description
