"""What a raw ASGI route reads of its request and sends back, for the routes that
answer without the framework's request and response objects (the public documents,
the authorization server's form endpoints): header fields from the scope, the caller's
address, the body within a limit, an answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, HTTPScope, Receive, Scope, Send

from .errors import InvalidRequestError, MethodNotAllowedError, PayloadTooLargeError, fit_description
from .http import Held, none_match


def header_values(scope: Scope, name: bytes) -> list[str]:
    """Every value of a request header field, as sent (ASGI gives names in lower case)."""
    return [value.decode("latin-1") for key, value in scope["headers"] if key == name]


def first_header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header field, or None."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def client_address(scope: Scope) -> str:
    """The caller's address (`serve` puts a trusted proxy's X-Forwarded-For here;
    FORWARDED_ALLOW_IPS), or "unknown" when the server gave none."""
    client = scope.get("client")
    return client[0] if client else "unknown"


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """A raw ASGI route's request body, at most `limit` bytes: past it, or announced
    past it by Content-Length, a 413 before anything is parsed (as the framework's
    routes answer with `request_max_body_size`)."""
    announced = first_header(scope, b"content-length")
    if announced is not None and announced.isdigit() and int(announced) > limit:
        raise PayloadTooLargeError(f"the request body must be at most {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InvalidRequestError("the request ended before its body")
        chunk: bytes = message.get("body", b"")  # type: ignore[assignment]
        size += len(chunk)
        if size > limit:
            raise PayloadTooLargeError(f"the request body must be at most {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def send_answer(
    send: Send,
    body: bytes,
    headers: Mapping[str, str],
    *,
    status: int = 200,
    media_type: str | None = "application/json",
) -> None:
    """A raw ASGI route's answer: `body` (of `media_type`, if any) with `headers`."""
    raw = [(b"content-length", str(len(body)).encode())]
    if media_type is not None:
        raw.insert(0, (b"content-type", media_type.encode()))
    raw += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    await send(HTTPResponseStartEvent(type="http.response.start", status=status, headers=raw))
    await send(HTTPResponseBodyEvent(type="http.response.body", body=body, more_body=False))


_READS = ("GET", "HEAD")


async def send_document(
    scope: Scope,
    send: Send,
    document: Held,
    cache_control: str = "public, max-age=300",
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Answer a GET or HEAD with pre-serialised bytes, honouring If-None-Match (RFC 9110
    §13.1.2) with a 304. For the public documents every client fetches (discovery,
    JWKS): a raw ASGI handler's answer, and the `HeldDocuments` front door's (which
    adds the path's CORS header fields as `extra`; a route's are added by its
    service's `CorsMiddleware`)."""
    method = cast(HTTPScope, scope)["method"]
    if method not in _READS:
        err = MethodNotAllowedError(f"{fit_description(method)} is not allowed here; use GET or HEAD")
        err.headers["Allow"] = "GET, HEAD"
        raise err
    tag = document.etag.encode()
    headers = [(b"etag", tag), (b"cache-control", cache_control.encode()), *extra]
    condition = first_header(scope, b"if-none-match")
    if condition is not None and none_match(condition.encode("latin-1"), tag):
        await send(HTTPResponseStartEvent(type="http.response.start", status=304, headers=headers))
        await send(HTTPResponseBodyEvent(type="http.response.body", body=b"", more_body=False))
        return
    body = document.body
    headers += [(b"content-type", document.media_type.encode()), (b"content-length", str(len(body)).encode())]
    await send(HTTPResponseStartEvent(type="http.response.start", status=200, headers=headers))
    await send(
        HTTPResponseBodyEvent(type="http.response.body", body=b"" if method == "HEAD" else body, more_body=False)
    )
