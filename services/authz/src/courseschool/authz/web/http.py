"""What the authorization server's handlers share: the dependencies that hand each
its family (families.py) from the root the lifespan built (app.state.authz), form and
query parsing, the caller's address."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide

from courseschool.common.errors import InvalidRequestError
from courseschool.common.web import json_response, no_store_json

from ..families import AccountPages, Administration, Internal, Registration, SignInPages, Tokens
from .user_agent import short_user_agent

# Each handler names the family it is given, by the parameter's name.
TokensDep = NamedDependency[Tokens]
SignInPagesDep = NamedDependency[SignInPages]
AccountPagesDep = NamedDependency[AccountPages]
RegistrationDep = NamedDependency[Registration]
AdministrationDep = NamedDependency[Administration]
InternalDep = NamedDependency[Internal]


def provide_tokens(state: State) -> Tokens:
    return state.authz.tokens


def provide_pages(state: State) -> SignInPages:
    return state.authz.sign_in


def provide_account(state: State) -> AccountPages:
    return state.authz.account


def provide_registration(state: State) -> Registration:
    return state.authz.registration


def provide_administration(state: State) -> Administration:
    return state.authz.administration


def provide_internal(state: State) -> Internal:
    return state.authz.internal


FAMILIES = {
    "tokens": Provide(provide_tokens, sync_to_thread=False),
    "pages": Provide(provide_pages, sync_to_thread=False),
    "account": Provide(provide_account, sync_to_thread=False),
    "registration": Provide(provide_registration, sync_to_thread=False),
    "administration": Provide(provide_administration, sync_to_thread=False),
    "internal": Provide(provide_internal, sync_to_thread=False),
}


def multi(items: Iterable[tuple[str, Any]]) -> dict[str, list[str]]:
    """Parameters by name, every value kept (repetition is refused by protocol code)."""
    out: dict[str, list[str]] = {}
    for key, value in items:
        if isinstance(value, str):
            if "\x00" in key or "\x00" in value:
                raise InvalidRequestError("parameters must not contain NUL characters")
            out.setdefault(key, []).append(value)
    return out


async def form_params(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
    """RFC 6749 §3.2 and RFC 7009/7662: a form-encoded body."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise InvalidRequestError("the request body must be application/x-www-form-urlencoded")
    return multi((await request.form()).multi_items())


def client_ip(request: Request[Any, Any, Any]) -> str:
    """The caller's address (`serve` puts a trusted proxy's X-Forwarded-For here; FORWARDED_ALLOW_IPS)."""
    return request.client.host if request.client else "unknown"


def client_agent(request: Request[Any, Any, Any]) -> str | None:
    """The caller's browser in a few words ("Firefox on Linux"); the header is not kept."""
    return short_user_agent(request.headers.get("user-agent"))


__all__ = [
    "FAMILIES",
    "AccountPagesDep",
    "AdministrationDep",
    "InternalDep",
    "RegistrationDep",
    "SignInPagesDep",
    "TokensDep",
    "client_agent",
    "client_ip",
    "form_params",
    "json_response",
    "multi",
    "no_store_json",
]
