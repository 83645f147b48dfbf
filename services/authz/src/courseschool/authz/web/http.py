"""What the authorization server's handlers share: the dependencies that hand each
its family (families.py) from the root the lifespan built (app.state.authz), form and
query parsing, the caller's address, and the raw route of the form endpoints."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

from litestar import Request, asgi
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send

from courseschool.common.errors import InvalidRequestError, MethodNotAllowedError, fit_description
from courseschool.common.raw import client_address, first_header, read_body, send_answer
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


def provide_sign_in_pages(state: State) -> SignInPages:
    return state.authz.sign_in_pages


def provide_account_pages(state: State) -> AccountPages:
    return state.authz.account_pages


def provide_registration(state: State) -> Registration:
    return state.authz.registration


def provide_administration(state: State) -> Administration:
    return state.authz.administration


def provide_internal(state: State) -> Internal:
    return state.authz.internal


FAMILIES = {
    "tokens": Provide(provide_tokens, sync_to_thread=False),
    "sign_in_pages": Provide(provide_sign_in_pages, sync_to_thread=False),
    "account_pages": Provide(provide_account_pages, sync_to_thread=False),
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


def form_fields(content_type: str | None, body: bytes) -> dict[str, list[str]]:
    """RFC 6749 §3.2 and RFC 7009/7662: a form-encoded body (read as the framework reads
    one: its bytes as Latin-1, percent-escapes as UTF-8)."""
    if (content_type or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise InvalidRequestError("the request body must be application/x-www-form-urlencoded")
    return multi(parse_qsl(body.decode("latin-1"), keep_blank_values=True, separator="&"))


def client_ip(request: Request[Any, Any, Any]) -> str:
    """The caller's address (`serve` puts a trusted proxy's X-Forwarded-For here; FORWARDED_ALLOW_IPS)."""
    return client_address(request.scope)


MAX_BODY = 64 * 1024  # every request to the authorization server


class FormPost(NamedTuple):
    """What a form endpoint reads of its request: the family that serves it, the
    parameters, the caller's address and Authorization header, and the request's scope
    (the target of a DPoP proof)."""

    tokens: Tokens
    form: dict[str, list[str]]
    ip: str
    authorization: str | None
    scope: Scope


class FormAnswer(NamedTuple):
    """A form endpoint's 200: its JSON (empty for revocation) and header fields."""

    body: bytes
    headers: Mapping[str, str]


_ALLOW = "POST, OPTIONS"


def form_post(paths: list[str]) -> Callable[[Callable[[FormPost], Awaitable[FormAnswer]]], ASGIRouteHandler]:
    """The token, revocation and introspection endpoints: a form-encoded POST answered
    with JSON, as a raw ASGI route. Routing, the request id, the log line, the metrics
    and the one exception handler are the same as any route's; what the raw route skips
    is the framework's work per request that these endpoints do not need (dependency
    injection, the request and response objects, its form parser), about a tenth of a
    token request's CPU (bench/RESULTS.md). The rest of the method's contract is kept:
    OPTIONS names the methods, any other method is a 405 with Allow, a body over
    MAX_BODY a 413."""

    def route(answer: Callable[[FormPost], Awaitable[FormAnswer]]) -> ASGIRouteHandler:
        async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            method = scope["method"]  # type: ignore[typeddict-item]
            if method == "OPTIONS":
                await send_answer(send, b"", {"Allow": _ALLOW}, status=204, media_type=None)
                return
            if method != "POST":
                err = MethodNotAllowedError(f"{fit_description(method)} is not allowed here; use POST")
                err.headers["Allow"] = _ALLOW
                raise err
            form = form_fields(first_header(scope, b"content-type"), await read_body(scope, receive, MAX_BODY))
            tokens = scope["app"].state.authz.tokens
            post = FormPost(tokens, form, client_address(scope), first_header(scope, b"authorization"), scope)
            answered = await answer(post)
            await send_answer(send, answered.body, answered.headers)

        endpoint.__name__ = endpoint.__qualname__ = answer.__name__
        endpoint.__doc__ = answer.__doc__
        return asgi(paths, copy_scope=False, opt={"methods": ("POST",)})(endpoint)

    return route


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
    "MAX_BODY",
    "FormAnswer",
    "FormPost",
    "client_ip",
    "form_fields",
    "form_post",
    "json_response",
    "multi",
    "no_store_json",
]
