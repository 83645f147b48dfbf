"""What the authorization server's handlers share: the dependency that hands them
the `Components`, form and query parsing, the caller's address."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency

from courseschool.common.errors import InvalidRequestError
from courseschool.common.web import check_internal, json_response, no_store_json

from ..components import Components
from .user_agent import short_user_agent

Authz = NamedDependency[Components]


def provide_authz(state: State) -> Components:
    """The components the composition root built at start-up (app.py)."""
    return state.authz


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
    "Authz",
    "check_internal",
    "client_agent",
    "client_ip",
    "form_params",
    "json_response",
    "multi",
    "no_store_json",
    "provide_authz",
]
